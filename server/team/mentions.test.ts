import { describe, expect, it } from "vitest";
import { mentionedNames, namesPerson } from "./mentions";

// Which `@names` a text mentions, and whom each names.

describe("mentions", () => {
  it("finds @names at word starts, not in addresses, once each, without trailing punctuation", () => {
    expect(mentionedNames("@Olive and @max.smith, please (see @olive).")).toEqual(["olive", "max.smith"]);
    expect(mentionedNames("mail pat@example.com or @@x")).toEqual([]);
    expect(mentionedNames("@Zoë, ça va? @José-María")).toEqual(["zoë", "josé-maría"]);
    expect(mentionedNames("no mention here")).toEqual([]);
  });

  it("a name matches the whole name without spaces or the first name, case aside", () => {
    expect(namesPerson("olive", "Olive Stone")).toBe(true);
    expect(namesPerson("olivestone", "Olive Stone")).toBe(true);
    expect(namesPerson("stone", "Olive Stone")).toBe(false);
    expect(namesPerson("oli", "Olive Stone")).toBe(false);
  });
});
