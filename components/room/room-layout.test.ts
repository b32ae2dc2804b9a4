import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MEDIUM_MIN_PX, parsePrefs, WIDE_MIN_PX } from "./room-layout";
import { currentItem } from "./room-switcher";

describe("room layout", () => {
  it("uses the same widths in room.css's media queries for the room's shape as in the script", () => {
    const css = readFileSync(path.join(import.meta.dirname, "room.css"), "utf8");
    // Media queries that shape the room (others, such as the prompt box's, have their own widths).
    const maxWidths = [...css.matchAll(/@media \(max-width: (\d+)px\) \{/g)]
      .filter((m) => /\.room[-\s]/.test(blockAt(css, m.index + m[0].length)))
      .map((m) => Number(m[1]));
    expect([...new Set(maxWidths)].sort((a, b) => b - a)).toEqual([WIDE_MIN_PX - 1, MEDIUM_MIN_PX - 1]);
  });

  it("reads stored preferences, taking anything unreadable as the default", () => {
    expect(parsePrefs(null)).toEqual({ sidebar: "shown", panel: "normal" });
    expect(parsePrefs('{"sidebar":"hidden","panel":"wide"}')).toEqual({ sidebar: "hidden", panel: "wide" });
    expect(parsePrefs('{"sidebar":"sideways","panel":"hidden"}')).toEqual({ sidebar: "shown", panel: "hidden" });
    expect(parsePrefs("not json")).toEqual({ sidebar: "shown", panel: "normal" });
  });

  it("names the phone switcher's item for the screen shown: Files and Transcript are both the centre", () => {
    expect(currentItem("centre", "agent")).toBe("Transcript");
    expect(currentItem("centre", "timeline")).toBe("Transcript");
    expect(currentItem("centre", "files")).toBe("Files");
    expect(currentItem("tasks", "files")).toBe("Tasks");
    expect(currentItem("agents", "agent")).toBe("Agents");
    expect(currentItem("people", "agent")).toBe("People");
  });
});

/** The text of a CSS block from just after its `{` to its matching `}`. */
function blockAt(css: string, start: number): string {
  let depth = 1;
  let i = start;
  for (; i < css.length && depth > 0; i++) depth += css[i] === "{" ? 1 : css[i] === "}" ? -1 : 0;
  return css.slice(start, i - 1);
}
