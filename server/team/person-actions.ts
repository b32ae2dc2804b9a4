import { inTx, type Db, type DbOrTx, type Tx } from "../db/client";
import { copyMemoriesAsOf } from "../memory/store";
import { asSessionId, type SessionId } from "../ids";
import type { ModelChoice } from "../models/choice";
import { recordAction, type HumanActor } from "../people/actions";
import type { Person } from "../people/person";
import { addOwner } from "../people/team-people";
import { ref } from "../person-ref";
import { editQueued, removeQueued, steerNow, type InboxItemView } from "../runtime/inbox";
import { createSession, forkSession, promptSession, requestAbort, type SessionView } from "../runtime/sessions";
import { copyWorkspaceAsOf } from "../workspace/fork";
import { recordMentions } from "./mentions";
import { startingToolPolicy } from "./tool-policy";

// What people do to a team's agents: each is the runtime's own operation plus the record of who
// did it (people/actions.ts), in one transaction. An action and its author commit together, and
// a person removed or demoted meanwhile has the whole action rolled back.

/** A new team: its Lead, owned by its creator, with the instance's starting tool policy. */
export async function createTeam(db: DbOrTx, input: { title: string; model: ModelChoice; by: Person }): Promise<SessionView> {
  return inTx(db, async (tx) => {
    const lead = await createSession(tx, { title: input.title, model: input.model, createdBy: ref(input.by) });
    await ownNewTeam(tx, asSessionId(lead.id), input.by, "team_created", {});
    return lead;
  });
}

/**
 * A new team from a session's completed turns (runtime/sessions.ts forkSession), with the
 * source team's workspace and memory as they were at the fork point (SPEC.md §14, §20); owned
 * by `by` when given.
 */
export async function forkTeam(db: Db, sourceId: SessionId, input: { throughSeq?: number; title?: string; by?: HumanActor }): Promise<SessionView> {
  const { by } = input;
  const fork = { throughSeq: input.throughSeq, title: input.title, createdBy: by && ref(by.person) };
  return forkSession(db, sourceId, fork, async (tx, at) => {
    if (by) {
      // Recorded in the source team (who forked what) and in the new one (who owns it).
      await recordAction(tx, by, "fork", { sessionId: sourceId, detail: { forkId: at.id, throughSeq: at.cut } });
      await ownNewTeam(tx, at.id, by.person, "fork", { sourceId, throughSeq: at.cut });
    }
    if (at.cutAt && at.sourceTeamId) {
      await copyWorkspaceAsOf(tx, at.sourceTeamId, at.id, at.cutAt);
      await copyMemoriesAsOf(tx, at.sourceTeamId, at.id, at.cutAt);
    }
  });
}

async function ownNewTeam(tx: Tx, teamId: SessionId, person: Person, action: "team_created" | "fork", detail: Record<string, unknown>) {
  await addOwner(tx, teamId, person);
  await startingToolPolicy(tx, teamId);
  await recordAction(tx, { person, teamId }, action, { sessionId: teamId, detail });
}

/**
 * A person's prompt: the one way a human prompt enters (the API, the MCP server). In one
 * transaction: the Queue item (SPEC.md §2), its author's record, and the people it mentions told.
 */
export async function promptAs(db: DbOrTx, sessionId: SessionId, input: { text: string; by: HumanActor; traceparent?: string }): Promise<InboxItemView> {
  return inTx(db, async (tx) => {
    const item = await promptSession(tx, sessionId, { text: input.text, from: ref(input.by.person), traceparent: input.traceparent });
    await recordAction(tx, input.by, "prompt", { sessionId, detail: { itemId: item.id } });
    await recordMentions(tx, input.by.teamId, input.text, {
      by: { name: input.by.person.name, userId: input.by.person.id },
      where: "A prompt",
      key: `mention:prompt:${item.id}`,
    });
    return item;
  });
}

/** A person's Stop of the session's running turn. */
export async function stopAs(db: DbOrTx, sessionId: SessionId, by: HumanActor): Promise<{ aborting: boolean }> {
  return inTx(db, async (tx) => {
    const result = await requestAbort(tx, sessionId, "stop", ref(by.person));
    await recordAction(tx, by, "stop", { sessionId, detail: result });
    return result;
  });
}

export async function editQueuedAs(db: DbOrTx, sessionId: SessionId, itemId: string, text: string, by: HumanActor): Promise<InboxItemView> {
  return inTx(db, async (tx) => {
    const item = await editQueued(tx, sessionId, itemId, text, ref(by.person));
    await recordAction(tx, by, "queue_edited", { sessionId, detail: { itemId } });
    return item;
  });
}

export async function removeQueuedAs(db: DbOrTx, sessionId: SessionId, itemId: string, by: HumanActor): Promise<void> {
  await inTx(db, async (tx) => {
    const removed = await removeQueued(tx, sessionId, itemId);
    await recordAction(tx, by, "queue_removed", { sessionId, detail: { itemId, text: removed.text.slice(0, 200) } });
  });
}

export async function steerNowAs(db: DbOrTx, sessionId: SessionId, itemId: string, by: HumanActor): Promise<void> {
  await inTx(db, async (tx) => {
    await steerNow(tx, sessionId, itemId);
    await recordAction(tx, by, "steer_now", { sessionId, detail: { itemId } });
  });
}
