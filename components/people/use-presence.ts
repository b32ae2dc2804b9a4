"use client";

import { useMutation } from "@tanstack/react-query";
import { createContext, useCallback, useContext, useEffect, useRef, useState } from "react";
import type { PresenceEditing, PresenceWhere } from "~/server/team/presence";
import { PRESENCE_HEARTBEAT_MS } from "~/shared/presence-timing";
import { useTRPC } from "../trpc";

// This tab's presence in a team room (docs/SPEC.md §13 Presence): which agent the person is
// watching and typing to, where in the room they are and what they edit, sent on change and
// as a heartbeat inside the server's TTL. The row leaves when the tab's team feed closes
// (team.live carries the same client id).

/** Editors deep in the room (a task, a file) say what they edit through this. */
export const EditingContext = createContext<(editing: PresenceEditing | null) => void>(() => undefined);

/** While mounted with a value, this tab's presence says it edits that. */
export function useReportEditing(editing: PresenceEditing | null): void {
  const report = useContext(EditingContext);
  const key = editing === null ? null : JSON.stringify(editing);
  useEffect(() => {
    if (key === null) return;
    report(JSON.parse(key) as PresenceEditing);
    return () => report(null);
  }, [key, report]);
}

/** Typing counts as over this long after the last keystroke. */
export const TYPING_IDLE_MS = 3_000;
/** Changes are sent after this pause, so switching agents quickly sends one update. */
const SEND_DEBOUNCE_MS = 250;

/** A random id for this tab (8–64 of [A-Za-z0-9_-]; 32 hex characters here). */
export function newClientId(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function usePresence({
  teamId,
  clientId,
  watching,
  place,
  file,
  live,
}: {
  teamId: string;
  clientId: string;
  /** The session id of the agent shown. */
  watching: string | null;
  place: PresenceWhere["place"];
  file: string | null;
  /** The team feed is connected: presence is (re)sent after every (re)connect. */
  live: boolean;
}) {
  const trpc = useTRPC();
  const { mutate } = useMutation(trpc.people.presence.mutationOptions());
  const [typingTo, setTypingTo] = useState<string | null>(null);
  const [editing, setEditing] = useState<PresenceEditing | null>(null);
  const idle = useRef<ReturnType<typeof setTimeout> | null>(null);

  useEffect(() => {
    if (!live) return;
    // A refused heartbeat (access just ended) needs no handling: the room shows why.
    const send = () => mutate({ teamId, clientId, watching, typingTo, place, file: place === "files" ? file : null, editing });
    const first = setTimeout(send, SEND_DEBOUNCE_MS);
    const beat = setInterval(send, PRESENCE_HEARTBEAT_MS);
    return () => {
      clearTimeout(first);
      clearInterval(beat);
    };
  }, [teamId, clientId, watching, typingTo, place, file, editing, live, mutate]);

  useEffect(
    () => () => {
      if (idle.current) clearTimeout(idle.current);
    },
    [],
  );

  /** A keystroke in the composer of `sessionId`. */
  const typed = useCallback((sessionId: string) => {
    setTypingTo(sessionId);
    if (idle.current) clearTimeout(idle.current);
    idle.current = setTimeout(() => setTypingTo(null), TYPING_IDLE_MS);
  }, []);

  /** The prompt was sent (or the box emptied): no longer typing. */
  const stoppedTyping = useCallback(() => {
    if (idle.current) clearTimeout(idle.current);
    setTypingTo(null);
  }, []);

  return { typed, stoppedTyping, setEditing };
}
