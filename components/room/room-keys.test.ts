import { describe, expect, it } from "vitest";
import { roomKey, SHORTCUTS } from "./room-keys";

const press = (key: string, mods: Partial<{ ctrlKey: boolean; metaKey: boolean; altKey: boolean }> = {}, inField = false) =>
  roomKey({ key, ctrlKey: false, metaKey: false, altKey: false, ...mods }, inField);

describe("roomKey", () => {
  it("maps every documented shortcut, and nothing while typing but the palette", () => {
    expect(press("/")).toEqual({ kind: "prompt" });
    expect(press("j")).toEqual({ kind: "agent", step: 1 });
    expect(press("k")).toEqual({ kind: "agent", step: -1 });
    expect(press("3")).toEqual({ kind: "view", index: 2 });
    expect(press("4")).toEqual({ kind: "view", index: 3 });
    expect(press("?")).toEqual({ kind: "help" });
    expect(press("]")).toEqual({ kind: "panel", step: 1 });
    expect(press("[")).toEqual({ kind: "panel", step: -1 });
    expect(press("k", { ctrlKey: true })).toEqual({ kind: "palette" });
    expect(press("K", { metaKey: true }, true)).toEqual({ kind: "palette" });
    expect(press("j", {}, true)).toBeNull();
    expect(press("/", {}, true)).toBeNull();
    expect(press("j", { altKey: true })).toBeNull();
    expect(press("x")).toBeNull();
    // The help lists each key the handler knows.
    for (const key of ["/", "j", "k", "1", "?", "[", "]"]) expect(SHORTCUTS.some((s) => s.keys.includes(key))).toBe(true);
  });
});
