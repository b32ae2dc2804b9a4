import { describe, expect, it } from "vitest";
import { teamMessageText } from "../../../shared/message-format";
import { ack } from "./reply";
import type { Seen } from "./seen";

// The keyless members acknowledge their mail as a sentence: who wrote what, one full stop.

const seenWith = (inputs: string[]): Seen => ({
  role: "lead",
  calls: [],
  name: "lead",
  tools: new Set(),
  goal: "",
  inputs,
  results: [],
  last: [],
  inputsSoFar: inputs,
  sentSinceInput: false,
  compacted: false,
  before: { calls: [], answer: null },
  assigned: null,
  request: null,
  waiting: 0,
  answered: false,
});

describe("ack", () => {
  it("names who wrote, and ends the sentence once whether or not the message did", () => {
    expect(ack(seenWith([teamMessageText("msg_1", "implementer", "task-2 is complete.")]))).toBe("Noted a message from implementer: task-2 is complete. ");
    expect(ack(seenWith([teamMessageText("msg_1", "researcher", "notes are in")]))).toBe("Noted a message from researcher: notes are in. ");
    expect(ack(seenWith(["a prompt"]))).toBe("");
  });
});
