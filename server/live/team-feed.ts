import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { Db, DbOrTx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { asSessionId, type SessionId } from "../ids";
import { LIMITS } from "../../shared/limits";
import { SpendSchema, type Spend } from "../models/catalog";
import { recentActions, PersonActionViewSchema, type PersonActionView } from "../people/actions";
import { listPresence, PresenceViewSchema, type PresenceView } from "../team/presence";
import { TeamRoleSchema, type TeamRole } from "../people/roles";
import { peopleFor, readPeople, TeamPersonViewSchema, type TeamPersonView } from "../people/team-people";
import { budgetView, BudgetViewSchema, teamBudgetLimit, type BudgetView } from "../team/budget";
import { recentMessages, TeamMessageViewSchema, type TeamMessageView } from "../team/mailbox";
import { listMembers, MemberViewSchema, teamSpend, type MemberView } from "../team/roster";
import { listTasks, TaskViewSchema, type TaskView } from "../team/task-board";
import { pendingRequests, WaitingViewSchema, type WaitingView } from "../team/approvals";
import { workspaceSummary, WorkspaceSummarySchema, type WorkspaceSummary } from "../workspace";
import { memorySummary, MemorySummarySchema, type MemorySummary } from "../memory/store";
import type { ActivityKind } from "../db/notify";
import type { Activity, ActivityHub } from "./activity";
import { ChangeSignal, perProcess, SharedReaders, type SharedReader } from "./shared-readers";
import type { TeamFeedMessage, TeamPatch } from "../../shared/team-delta";
import { TrackedRows, Value } from "./tracked-values";

// The shared reader behind every live feed of one team in this process. Each change re-reads
// only the sections its notification can have changed (ON_TEAM, ON_MEMBER: a step's spend or a
// status: the roster; a board change: the board; a person's action: the recent actions), once
// for all of the team's feeds;
// each section keeps the tail's seq of its last change, so a feed sends only what changed
// since what it sent (shared/team-delta.ts), and a reconnect that names an id of this tail resumes
// with just the changes since. Notifications stay hints: presence and the roster (a crashed
// process's leases lapse without one) are re-read every 10 s, everything every
// TEAM_FEED_REREAD_MS, and a LISTEN reconnect re-reads it all.

export interface TeamState {
  members: MemberView[];
  /** The team's total: its members' spend summed. */
  spend: Spend;
  tasks: TaskView[];
  messages: TeamMessageView[];
  /** The people of the team, who of them is in the room now, and what people did lately. */
  people: TeamPersonView[];
  presence: PresenceView[];
  actions: PersonActionView[];
  /** The workspace's size and newest change: the Files view re-reads when it moves. */
  workspace: WorkspaceSummary;
  /** How many memories wait and are approved, and the newest change: the Memory tab re-reads when it moves. */
  memory: MemorySummary;
  /** The team budget and spend: the room shows a stop and offers the raise. */
  budget: BudgetView;
  /** Tool calls waiting for approval and questions waiting for an answer, oldest first. */
  waiting: WaitingView[];
  /** The viewer's own role: the room enables the controls it allows. */
  myRole: TeamRole;
}
export const TeamStateSchema = z.object({
  members: z.array(MemberViewSchema),
  spend: SpendSchema,
  tasks: z.array(TaskViewSchema),
  messages: z.array(TeamMessageViewSchema),
  people: z.array(TeamPersonViewSchema),
  presence: z.array(PresenceViewSchema),
  actions: z.array(PersonActionViewSchema),
  workspace: WorkspaceSummarySchema,
  memory: MemorySummarySchema,
  budget: BudgetViewSchema,
  waiting: z.array(WaitingViewSchema),
  myRole: TeamRoleSchema,
});

export type TeamMessage = TeamFeedMessage<TeamState>;

/** Presence past its TTL and a crashed process's agents show within this. */
const QUICK_REREAD_MS = 10_000;
/** Spend shown in the room lags a step by at most this (one roster read for all steps in it). */
const SPEND_COALESCE_MS = 1_000;
/** Everything is re-read this often even without a hint. */
export const TEAM_FEED_REREAD_MS = 30_000;
/** A tail outlives its last feed this long, so a reconnect resumes with only the changes. */
const LINGER_MS = 30_000;

type Section = "roster" | "tasks" | "messages" | "budget" | "people" | "presence" | "actions" | "workspace" | "waiting" | "memory";
const ALL: Section[] = ["roster", "tasks", "messages", "budget", "people", "presence", "actions", "workspace", "waiting", "memory"];

/** What a notification on the team id can have changed (the Lead's session is the team id). */
const ON_TEAM: Record<ActivityKind, Section[]> = {
  team: ["roster", "budget", "waiting"],
  board: ["tasks"],
  mail: ["messages"],
  state: ["roster"],
  spend: ["roster"],
  inbox: [],
  abort: [],
  people: ["people", "presence"],
  actions: ["actions"],
  workspace: ["workspace"],
  event: [],
  credentials: [],
  outbox: [],
  notifications: [],
  memory: ["memory"],
};
/** … and one on a teammate's session. */
const ON_MEMBER: Record<ActivityKind, Section[]> = {
  team: [],
  board: [],
  mail: [],
  state: ["roster"],
  spend: ["roster"],
  inbox: [],
  abort: [],
  people: [],
  actions: [],
  workspace: [],
  event: [],
  credentials: [],
  outbox: [],
  notifications: [],
  memory: [],
};

/** Every task of the board, tombstones last. */
async function allTasks(db: DbOrTx, teamId: SessionId): Promise<TaskView[]> {
  const out: TaskView[] = [];
  for (const status of [undefined, "deleted"] as const) {
    let cursor: string | undefined;
    do {
      const page = await listTasks(db, teamId, { status, cursor, limit: LIMITS.taskListMax });
      out.push(...page.tasks);
      cursor = page.nextCursor;
    } while (cursor);
  }
  return out;
}

/** A team feed's event id as the client sends it back: `<tail epoch>.<seq>`. */
export const TeamFeedEventId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,16}\.\d{1,16}$/, "not a team feed event id")
  .refine((id) => Number.isSafeInteger(Number(id.split(".")[1])), "out of range");

/** What a feed has sent: the tail seq, and the role its people and role were sent for. */
export interface FeedCursor {
  seq: number | null;
  role: TeamRole | null;
}

export class TeamTail implements SharedReader {
  /** Names this tail in feed ids: an id of another tail (process, restart) gets the whole state. */
  private readonly epoch = randomBytes(6).toString("base64url");
  private seq = 0;
  private readonly members = new Value<MemberView[]>();
  private readonly spend = new Value<Spend>();
  private readonly budget = new Value<BudgetView>();
  private budgetLimit: Awaited<ReturnType<typeof teamBudgetLimit>>;
  private readonly tasks = new TrackedRows<TaskView>();
  private readonly messages = new TrackedRows<TeamMessageView>();
  private readonly people = new Value<TeamPersonView[]>();
  private readonly presence = new Value<PresenceView[]>();
  private readonly actions = new Value<PersonActionView[]>();
  private readonly workspace = new Value<WorkspaceSummary>();
  private readonly memory = new Value<MemorySummary>();
  private readonly waiting = new Value<WaitingView[]>();
  private dirty = new Set<Section>(ALL);
  private draining: Promise<void> | null;
  private readonly change = new ChangeSignal();
  private readonly offTeam: () => void;
  private readonly offMembers = new Map<string, () => void>();
  private readonly timers: NodeJS.Timeout[];
  private closed = false;
  private spendTimer: NodeJS.Timeout | null = null;
  /** Section reads made so far (diagnostics: one read serves every feed of the team). */
  reads = 0;
  readonly ready: Promise<void>;

  constructor(
    private readonly db: Db,
    private readonly hub: ActivityHub,
    readonly teamId: SessionId,
  ) {
    this.offTeam = hub.on(teamId, (a) => this.onActivity(a, ON_TEAM));
    this.timers = [
      setInterval(() => this.schedule(["roster", "presence"]), QUICK_REREAD_MS),
      setInterval(() => this.schedule(ALL), TEAM_FEED_REREAD_MS),
    ];
    for (const t of this.timers) t.unref();
    this.draining = this.drain();
    this.ready = this.draining;
  }

  get key(): string {
    return this.teamId;
  }

  /** Settles on the next change of any section. */
  changed(): Promise<void> {
    return this.change.next();
  }

  /** The seq of the last change to the people (a feed re-checks its access when it moves). */
  get peopleAt(): number {
    return this.people.at;
  }

  /** Where a feed resuming from `lastId` stands: an id of this tail, or nothing sent. */
  cursorOf(lastId: string | null): FeedCursor {
    const [epoch, seq] = lastId?.split(".") ?? [];
    const n = Number(seq);
    return { seq: epoch === this.epoch && Number.isInteger(n) && n >= 0 && n <= this.seq ? n : null, role: null };
  }

  /**
   * What a feed at `cursor` sends next, as `role` (the whole state first, then patches), with
   * its id; null when it has everything.
   */
  next(cursor: FeedCursor, role: TeamRole): { id: string; message: TeamMessage; cursor: FeedCursor } | null {
    const id = `${this.epoch}.${this.seq}`;
    const after = { seq: this.seq, role };
    if (cursor.seq === null) return { id, message: { type: "state", state: this.state(role) }, cursor: after };
    // A resumed feed (role unknown) had the people for its role then: a role change since is
    // a people change too, and with the people goes the role.
    const roleChanged = cursor.role !== null && cursor.role !== role;
    if (cursor.seq >= this.seq && !roleChanged) return null;
    const since = cursor.seq;
    const patch: TeamPatch<TeamState> = {};
    if (this.members.at > since) patch.members = this.members.value;
    if (this.spend.at > since) patch.spend = this.spend.value;
    if (this.budget.at > since) patch.budget = this.budget.value;
    if (this.presence.at > since) patch.presence = this.presence.value;
    if (this.actions.at > since) patch.actions = this.actions.value;
    if (this.workspace.at > since) patch.workspace = this.workspace.value;
    if (this.memory.at > since) patch.memory = this.memory.value;
    if (this.waiting.at > since) patch.waiting = this.waiting.value;
    if (this.people.at > since || roleChanged) {
      patch.people = peopleFor({ role }, this.people.value);
      patch.myRole = role;
    }
    const tasks = this.tasks.since(since);
    if (tasks) patch.tasks = tasks;
    const messages = this.messages.since(since);
    if (messages) patch.messages = messages;
    return { id, message: { type: "patch", patch }, cursor: after };
  }

  private state(role: TeamRole): TeamState {
    return {
      members: this.members.value,
      spend: this.spend.value,
      tasks: this.tasks.values(),
      messages: this.messages.values(),
      people: peopleFor({ role }, this.people.value),
      presence: this.presence.value,
      actions: this.actions.value,
      workspace: this.workspace.value,
      memory: this.memory.value,
      budget: this.budget.value,
      waiting: this.waiting.value,
      myRole: role,
    };
  }

  close(): void {
    this.closed = true;
    this.offTeam();
    for (const off of this.offMembers.values()) off();
    this.offMembers.clear();
    for (const t of this.timers) clearInterval(t);
    if (this.spendTimer) clearTimeout(this.spendTimer);
    this.change.fire();
  }

  private onActivity(a: Activity, map: Record<ActivityKind, Section[]>): void {
    if (a.sessionId === "*") return this.schedule(ALL);
    // Spend moves at every step of every member: one roster read per SPEND_COALESCE_MS shows it.
    if (a.kind === "spend") {
      this.spendTimer ??= setTimeout(() => {
        this.spendTimer = null;
        this.schedule(["roster"]);
      }, SPEND_COALESCE_MS);
      return;
    }
    this.schedule(map[a.kind]);
  }

  private schedule(sections: Section[]): void {
    if (sections.length === 0 || this.closed) return;
    for (const s of sections) this.dirty.add(s);
    this.draining ??= this.drain();
  }

  /** Reads the dirty sections until none are; one round at a time, however many hints came. */
  private async drain(): Promise<void> {
    try {
      while (!this.closed && this.dirty.size > 0) {
        const sections = this.dirty;
        this.dirty = new Set();
        try {
          await this.read(sections);
        } catch {
          // A failed read (the database restarting) is tried again; the feeds keep waiting.
          for (const s of sections) this.dirty.add(s);
          await new Promise((resolve) => setTimeout(resolve, 1_000).unref());
        }
      }
    } finally {
      this.draining = null;
    }
  }

  private async read(sections: Set<Section>): Promise<void> {
    const { db, teamId } = this;
    const want = (s: Section) => sections.has(s);
    this.reads += sections.size;
    const readSections = (q: DbOrTx, roster: SqlRunner) =>
      Promise.all([
        want("roster") ? listMembers(roster, teamId) : null,
        want("tasks") ? allTasks(q, teamId) : null,
        want("messages") ? recentMessages(q, teamId, LIMITS.messageListMax) : null,
        want("budget") ? teamBudgetLimit(q, teamId) : undefined,
        want("people") ? readPeople(q, teamId) : null,
        want("presence") ? listPresence(q, teamId) : null,
        want("actions") ? recentActions(q, teamId) : null,
        want("workspace") ? workspaceSummary(q, teamId) : null,
        want("waiting") ? pendingRequests(roster, teamId) : null,
        want("memory") ? memorySummary(q, teamId) : null,
      ]);
    // One section (the roster at a step's spend, every second; the mailbox at a message) is
    // one statement; several are read in one transaction: one commit instead of one per
    // statement, and one snapshot, so the board and the roster the room shows are of the same
    // moment.
    const [members, tasks, messages, limit, people, presence, actions, workspace, waiting, memory] =
      sections.size === 1
        ? await readSections(db, db.sql)
        : await db.$transaction((tx) => readSections(tx, tx), { isolationLevel: "RepeatableRead", maxWait: 10_000, timeout: 15_000 });
    if (this.closed) return;
    const seq = this.seq + 1;
    let changed = false;
    if (members) {
      changed = this.members.set(members, seq) || changed;
      changed = this.spend.set(teamSpend(members), seq) || changed;
      this.followMembers(members);
    }
    if (want("budget")) this.budgetLimit = limit;
    if (members || want("budget")) changed = this.budget.set(budgetView(this.budgetLimit, this.spend.value), seq) || changed;
    if (tasks) changed = this.tasks.set(tasks, seq) || changed;
    if (messages) changed = this.messages.set(messages, seq) || changed;
    if (people) changed = this.people.set(people, seq) || changed;
    if (presence) changed = this.presence.set(presence, seq) || changed;
    if (actions) changed = this.actions.set(actions, seq) || changed;
    if (workspace) changed = this.workspace.set(workspace, seq) || changed;
    if (waiting) changed = this.waiting.set(waiting, seq) || changed;
    if (memory) changed = this.memory.set(memory, seq) || changed;
    if (!changed) return;
    this.seq = seq;
    this.change.fire();
  }

  /** Listens to every teammate's session (their status and spend are in the roster). */
  private followMembers(members: MemberView[]): void {
    const ids = new Set(members.map((m) => m.sessionId).filter((id) => id !== this.teamId));
    for (const [id, off] of this.offMembers) {
      if (ids.has(id)) continue;
      off();
      this.offMembers.delete(id);
    }
    for (const id of ids) {
      if (!this.offMembers.has(id)) this.offMembers.set(id, this.hub.on(id, (a) => this.onActivity(a, ON_MEMBER)));
    }
  }
}

/** This process's team tails, one per watched team, shared by all of its feeds. */
export class TeamFeeds extends SharedReaders<TeamTail> {
  constructor(db: Db, hub: ActivityHub) {
    // A tail outlives its last feed a while, so a reconnect resumes with only the changes.
    super((id) => new TeamTail(db, hub, asSessionId(id)), LINGER_MS);
  }
}

/** The team feeds of the process that owns `hub` (one hub per process). */
export const teamFeedsOf = perProcess((db, hub) => new TeamFeeds(db, hub));
