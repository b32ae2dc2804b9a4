import { describe, expect, it } from "vitest";
import { readRoomLocation, roomHref, SPLIT_MAX, toggleSplitHref, transcriptHref } from "./room-url";

const read = (query: string) => readRoomLocation(new URLSearchParams(query));

describe("the room's address", () => {
  it("reads the view, member, split members and moment, with defaults", () => {
    expect(read("")).toEqual({ view: "agent", member: "lead", members: [], seq: null });
    expect(read("view=split&members=researcher,implementer,researcher")).toMatchObject({ view: "split", members: ["researcher", "implementer"] });
    expect(read("member=implementer&seq=42")).toMatchObject({ member: "implementer", seq: 42 });
    expect(read("seq=-1").seq).toBeNull();
    expect(read("seq=12abc").seq).toBeNull();
    // At most SPLIT_MAX transcripts side by side, whatever the address asks for.
    expect(read("view=split&members=a,b,c,d,e,f").members).toEqual(["a", "b", "c", "d"].slice(0, SPLIT_MAX));
  });

  it("writes what it reads, leaving defaults out", () => {
    for (const query of ["", "view=split&members=researcher,implementer", "member=implementer&seq=42", "view=files"]) {
      expect(roomHref("ses_t", read(query))).toBe(`/teams/ses_t${query ? `?${query}` : ""}`);
    }
    expect(transcriptHref("ses_t", read("view=split&members=a,b"), "b", 3)).toBe("/teams/ses_t?member=b&members=a,b&seq=3");
  });

  it("adds a member to the split view and takes the last one out back to the agent view", () => {
    expect(toggleSplitHref("ses_t", read("member=lead"), "researcher")).toBe("/teams/ses_t?view=split&members=researcher");
    expect(toggleSplitHref("ses_t", read("view=split&members=researcher"), "implementer")).toBe("/teams/ses_t?view=split&members=researcher,implementer");
    expect(toggleSplitHref("ses_t", read("view=split&members=researcher,implementer"), "researcher")).toBe("/teams/ses_t?view=split&members=implementer");
    expect(toggleSplitHref("ses_t", read("view=split&member=implementer&members=researcher"), "researcher")).toBe("/teams/ses_t?member=implementer");
  });
});
