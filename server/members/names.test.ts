import { describe, expect, it } from "vitest";
import { MemberNameSchema } from "./names";

describe("teammate names", () => {
  it.each(["researcher", "implementer-2", "a", "x".repeat(64), "db-migration-bot"])("accepts %s", (name) => {
    expect(MemberNameSchema.safeParse(name).success).toBe(true);
  });
  it.each(["Lead", "lead", "-bad", "bad-", "bad_name", "x".repeat(65), "", "two--hyphens", "has space", "Ünicode", "unowned"])(
    "rejects %j",
    (name) => {
      expect(MemberNameSchema.safeParse(name).success).toBe(false);
    },
  );
});
