import type { TRPCClientErrorLike } from "@trpc/client";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "~/server/trpc/root";

// The types the UI works with, all derived from the router: this is the UI's one import from
// server/ (apart from the shared constant MAX_BATCH_SIZE), so what it gets is exactly what the
// API sends (after superjson: dates stay Dates).

export type { AppRouter };
export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;

/** What one message of a subscription carries (tracked events arrive as { id, data }). */
type Yielded<T> = T extends AsyncIterable<infer U> ? U : never;

/** One message of the team feed: the whole state, or a patch of what changed. */
export type TeamLiveMessage = Yielded<RouterOutputs["team"]["live"]>["data"];
/** The live team snapshot: roster, board, mailbox, people. */
export type TeamState = Extract<TeamLiveMessage, { type: "state" }>["state"];
export type MemberView = TeamState["members"][number];
/** What a member (or, summed, the team) has spent: tokens and nano-USD. */
export type Spend = MemberView["spend"];
export type TaskView = TeamState["tasks"][number];
export type ChangedBy = NonNullable<TaskView["changedBy"]>;
export type TeamMessageView = TeamState["messages"][number];

/** A team memory (a proposal or an approved one) as the Memory tab lists it. */
export type MemoryView = RouterOutputs["memory"]["list"][number];

/** One message of a session's live feed: a batch of events, or the session state. */
export type SessionLiveMessage = Yielded<RouterOutputs["session"]["live"]>["data"];
export type SessionLiveState = Extract<SessionLiveMessage, { type: "state" }>["state"];

/** One entry of a session's log, as the transcript reads it. */
export type TranscriptEvent = RouterOutputs["session"]["transcript"]["events"][number];
export type TranscriptPayload = TranscriptEvent["payload"];
export type MessageSource = Extract<TranscriptPayload, { kind: "user_message" }>["source"];
export type TurnEndReason = Extract<TranscriptPayload, { kind: "turn_end" }>["reason"];

/** The team timeline: one entry (a turn, tool call, prompt, message or task change) and a live message. */
export type TimelineLiveMessage = Yielded<RouterOutputs["timeline"]["live"]>["data"];
export type TimelineEntry = RouterOutputs["timeline"]["page"]["entries"][number];
export type TimelineKind = TimelineEntry["kind"];
export type TimelineFilter = Pick<RouterInputs["timeline"]["page"], "members" | "kinds">;

/** A model a new team may use, as the server lists them. */
export type ModelOption = RouterOutputs["session"]["models"][number];
/** The model choice a new team is created with. */
export type ModelChoice = NonNullable<RouterInputs["session"]["create"]["model"]>;

/** The update a person sends from the task board. */
export type TaskUpdate = RouterInputs["team"]["updateTask"];
export type TaskAction = TaskUpdate["action"];

/** A failed call as the client sees it; `data.appCode` is the server's stable code. */
export type ApiError = TRPCClientErrorLike<AppRouter>;
export type AppErrorCode = NonNullable<ApiError["data"]>["appCode"];

/** People: the team's people, who is in the room, what people did, and one's own role. */
export type TeamPerson = TeamState["people"][number];
export type PresenceView = TeamState["presence"][number];
export type PersonAction = TeamState["actions"][number];
export type TeamRole = TeamState["myRole"];
export type InviteRole = RouterInputs["people"]["invite"]["role"];
export type InviteView = RouterOutputs["people"]["invites"][number];
export type InviteInfo = RouterOutputs["people"]["inviteInfo"];
export type InboxItem = SessionLiveState["inbox"][number];

/** The team workspace (SPEC.md §14): its summary in the team feed, listings, reads, versions, changes. */
export type WorkspaceState = TeamState["workspace"];
/** A tool call waiting for approval or a question waiting for an answer. */
export type WaitingRequest = TeamState["waiting"][number];
export type FileEntry = RouterOutputs["workspace"]["list"]["files"][number];
export type FileAuthor = FileEntry["author"];
export type FileContent = RouterOutputs["workspace"]["read"];
export type FileVersion = RouterOutputs["workspace"]["history"][number];
export type FileChange = RouterOutputs["workspace"]["write"];

/** The instance and who is signed in (null when nobody is). */
export type AccountStatus = RouterOutputs["account"]["status"];
export type ApiTokenView = RouterOutputs["account"]["tokens"][number];

/** A person's notifications (SPEC.md §17): a page of them with the unread count, and one. */
export type NotificationPage = RouterOutputs["notifications"]["list"];
export type NotificationView = NotificationPage["items"][number];
export type NotificationKind = NotificationView["kind"];
export type AuditEntry = RouterOutputs["audit"]["list"]["entries"][number];
