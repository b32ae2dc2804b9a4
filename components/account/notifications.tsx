"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { Link } from "../ui/link";
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import type { NotificationKind, NotificationPage, NotificationView } from "../api-types";
import { useTRPC } from "../trpc";
import { RelativeTime } from "../ui/relative-time";
import { SettingCheckbox } from "../ui/setting-checkbox";
import { Skeleton } from "../ui/skeleton";
import { ErrorAlert, InlineError } from "../ui/alert";
import { WaitingRequestItem } from "../control/waiting-requests";
import { LIMITS } from "~/shared/limits";
import { Button } from "../ui/button";
import { DecideMemory } from "../memory/memory-panel";

// A person's notifications across their teams (SPEC.md §17): the unread count in the top bar,
// live; the /notifications page to read them, mark them read, decide or answer what waits, and
// choose what to receive; browser notifications while the tab is hidden, once the person turned
// them on (the browser's permission is asked on that click, never on load).

/** Each kind as the settings name it. */
export const NOTIFICATION_KINDS: Record<NotificationKind, string> = {
  "approval.requested": "Tool calls waiting for approval",
  "question.asked": "Questions from agents",
  "plan.proposed": "Plans waiting for approval",
  "team.finished": "The Lead answered",
  "agent.failed": "An agent failed",
  "budget.reached": "A team reached its budget",
  mention: "Mentions of you",
  "memory.proposed": "Memories waiting for approval",
  "routine.skipped": "Your routines' runs that were skipped",
};

function useNotificationsLive(): { data: NotificationPage | undefined; error: string | null } {
  const trpc = useTRPC();
  const sub = useSubscription(trpc.notifications.live.subscriptionOptions(undefined));
  return { data: sub.data?.data, error: sub.error?.message ?? null };
}

/** The top bar's link to the inbox with the live unread count; it also raises browser notifications. */
export function NotificationsLink() {
  const { data } = useNotificationsLive();
  const router = useRouter();
  useBrowserNotifications(data?.items, (href) => router.push(href));
  const unread = data?.unread ?? 0;
  return (
    // The name is the visible text, the count and a word only screen readers hear (WCAG 2.5.3:
    // a spoken "Notifications 3" command finds it).
    <Link href="/notifications" className="notifications-link">
      Notifications{" "}
      {unread > 0 && (
        <span className="badge badge-unread">
          {unread > 99 ? "99+" : unread}
          <span className="sr-only"> unread</span>
        </span>
      )}
    </Link>
  );
}

// ---- Browser notifications ----

const BROWSER_KEY = "agent-teams:browser-notifications";
const listeners = new Set<() => void>();
const supported = () => typeof window !== "undefined" && "Notification" in window;

/** Whether the person turned browser notifications on here (and the browser allows them). */
function browserNotificationsOn(): boolean {
  return supported() && Notification.permission === "granted" && localStorage.getItem(BROWSER_KEY) === "on";
}

function useBrowserSetting(): boolean {
  return useSyncExternalStore(
    (fn) => {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    browserNotificationsOn,
    () => false,
  );
}

/** Shows each new unread notification as a browser notification while the tab is hidden. */
function useBrowserNotifications(items: NotificationView[] | undefined, open: (href: string) => void) {
  const seen = useRef<Set<string> | null>(null);
  useEffect(() => {
    if (!items) return;
    // What the first page holds was there before this tab: never announced.
    if (seen.current === null) {
      seen.current = new Set(items.map((n) => n.id));
      return;
    }
    const fresh = items.filter((n) => !seen.current!.has(n.id));
    for (const n of fresh) seen.current.add(n.id);
    if (document.visibilityState !== "hidden" || !browserNotificationsOn()) return;
    for (const n of fresh.filter((x) => !x.read)) {
      const shown = new Notification(n.title, { body: n.body, tag: n.id });
      shown.onclick = () => {
        window.focus();
        open(`/teams/${n.teamId}`);
      };
    }
  }, [items, open]);
}

function BrowserNotificationsToggle() {
  const on = useBrowserSetting();
  const [refused, setRefused] = useState(false);
  if (!supported()) return <p className="muted">This browser cannot show notifications.</p>;
  const set = (value: "on" | "off") => {
    localStorage.setItem(BROWSER_KEY, value);
    for (const fn of listeners) fn();
  };
  return (
    <div className="row">
      {on ? (
        <Button variant="secondary" onClick={() => set("off")}>
          Turn off browser notifications
        </Button>
      ) : (
        <Button
         
          variant="secondary"
          onClick={() => {
            void Notification.requestPermission().then((p) => {
              setRefused(p !== "granted");
              if (p === "granted") set("on");
            });
          }}
        >
          Turn on browser notifications
        </Button>
      )}
      <span className="muted" role="status">
        {on ? "Shown while this tab is hidden." : refused ? "The browser refused: allow notifications for this site in its settings." : ""}
      </span>
    </div>
  );
}

// ---- The page ----

export function NotificationsPage() {
  const trpc = useTRPC();
  const live = useNotificationsLive();
  const queryClient = useQueryClient();
  // Pages before the live one, read on request; `more`: the last read was a whole page.
  const [older, setOlder] = useState<{ items: NotificationView[]; more: boolean; loading: boolean; error: string | null }>({
    items: [],
    more: true,
    loading: false,
    error: null,
  });
  const markAll = useMutation(trpc.notifications.markRead.mutationOptions());

  const newest = live.data?.items ?? [];
  const items = [...newest, ...older.items.filter((n) => !newest.some((x) => x.id === n.id))];
  const canShowOlder = newest.length === LIMITS.notificationPage && older.more;
  const showOlder = async () => {
    setOlder((o) => ({ ...o, loading: true, error: null }));
    try {
      const page = await queryClient.fetchQuery(trpc.notifications.list.queryOptions({ before: items.at(-1)!.id }));
      setOlder((o) => ({ items: [...o.items, ...page.items], more: page.items.length === LIMITS.notificationPage, loading: false, error: null }));
    } catch (e) {
      setOlder((o) => ({ ...o, loading: false, error: e instanceof Error ? e.message : String(e) }));
    }
  };
  return (
    <main className="page narrow">
      <h1>Notifications</h1>
      <div className="row">
        <Button disabled={!live.data || live.data.unread === 0 || markAll.isPending} onClick={() => markAll.mutate({ all: true })}>
          Mark all read
        </Button>
        <span className="muted" role="status">
          {live.data ? (live.data.unread === 0 ? "Nothing unread." : `${live.data.unread} unread`) : ""}
        </span>
      </div>
      {live.error && !live.data && <InlineError onRetry={() => window.location.reload()}>Your notifications could not be read: {live.error}</InlineError>}
      {!live.data && !live.error && <Skeleton label="Loading your notifications…" rows={3} />}
      {live.data && items.length === 0 && <p className="muted">No notifications yet. Agents waiting for you, answers, failures and budgets will show here.</p>}
      <ul className="notification-list" aria-label="Notifications">
        {items.map((n) => (
          <NotificationItem key={n.id} n={n} />
        ))}
      </ul>
      {canShowOlder && (
        <Button variant="secondary" disabled={older.loading} onClick={() => void showOlder()}>
          Show older
        </Button>
      )}
      {older.error && <InlineError onRetry={() => void showOlder()}>Older notifications could not be read: {older.error}</InlineError>}
      <section aria-labelledby="notification-settings">
        <h2 id="notification-settings">What to notify you of</h2>
        <NotificationSettings />
        <BrowserNotificationsToggle />
      </section>
    </main>
  );
}

function NotificationItem({ n }: { n: NotificationView }) {
  const trpc = useTRPC();
  const mark = useMutation(trpc.notifications.markRead.mutationOptions());
  return (
    <li className={n.read ? "notification" : "notification unread"} aria-label={`${n.read ? "" : "Unread: "}${n.title}`}>
      <p className="notification-title">
        <strong>{n.title}</strong> <RelativeTime at={n.createdAt} />
      </p>
      {n.body && <p className="notification-body">{n.body}</p>}
      {n.pending && n.approvalId && <PendingRequest teamId={n.teamId} approvalId={n.approvalId} />}
      {n.pending && n.memoryId && <DecideMemory teamId={n.teamId} memoryId={n.memoryId} />}
      <div className="row">
        <Link href={`/teams/${n.teamId}`}>Open the team</Link>
        {!n.read && (
          <Button variant="link" disabled={mark.isPending} onClick={() => mark.mutate({ ids: [n.id] })}>
            Mark read
          </Button>
        )}
      </div>
    </li>
  );
}

/** The request a notification names, to decide or answer here while it waits. */
function PendingRequest({ teamId, approvalId }: { teamId: string; approvalId: string }) {
  const trpc = useTRPC();
  // Shown while the notification says it waits (a decision reaches every inbox it is in, live).
  const pending = useQuery(trpc.approvals.pending.queryOptions({ teamId }));
  if (!pending.data) return null;
  const request = pending.data.find((r) => r.id === approvalId);
  if (!request) return <p className="muted">Already decided.</p>;
  return (
    <div className="waiting-item">
      <WaitingRequestItem teamId={teamId} request={request} canAct isOwner={false} />
    </div>
  );
}

function NotificationSettings() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const settings = useQuery(trpc.notifications.settings.queryOptions());
  const save = useMutation(
    trpc.notifications.setSettings.mutationOptions({ onSuccess: (saved) => queryClient.setQueryData(trpc.notifications.settings.queryKey(), saved) }),
  );
  if (!settings.data) return settings.error ? <InlineError onRetry={() => void settings.refetch()}>{settings.error.message}</InlineError> : null;
  const muted = new Set(settings.data.muted);
  return (
    <fieldset className="notification-settings">
      <legend className="sr-only">Kinds of notification</legend>
      {(Object.keys(NOTIFICATION_KINDS) as NotificationKind[]).map((kind) => (
        <SettingCheckbox
          key={kind}
          saved={!muted.has(kind)}
          pending={save.isPending}
          save={(on) => save.mutateAsync({ muted: [...muted].filter((k) => k !== kind).concat(on ? [] : [kind]) })}
        >
          {NOTIFICATION_KINDS[kind]}
        </SettingCheckbox>
      ))}
      <ErrorAlert error={save.error} />
    </fieldset>
  );
}
