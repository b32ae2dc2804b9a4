import { describe, expect } from "vitest";
import { isAppError } from "../errors";
import { runtimeTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { newTestSession } from "../testing/runtime-harness";
import { instanceToolDefaults, setInstanceToolDefault, setToolMode, toolPolicyOf } from "./tool-policy";

// The instance owner's tool defaults (SPEC.md §17): a new team starts with them; teams made
// before keep their policy, and a team's own change wins over the default it started with.

const it = runtimeTest({ team: true });

describe("instance tool defaults", () => {
  it("new teams start with them; older teams and later changes are their own", async ({ rt }) => {
    const owner = await createTestPerson(rt.db, "Instance owner");
    const tools = rt.runtime.toolNames();
    const before = await newTestSession(rt.db, "Before", owner);
    expect((await instanceToolDefaults(rt.db.sql, tools)).find((t) => t.tool === "workspace_write")).toEqual({ tool: "workspace_write", mode: "allow" });

    await setInstanceToolDefault(rt.db.sql, owner, tools, "workspace_write", "ask");
    await setInstanceToolDefault(rt.db.sql, owner, tools, "workspace_delete", "off");
    expect(isAppError(await setInstanceToolDefault(rt.db.sql, owner, tools, "no_such_tool", "ask").catch((e: unknown) => e), "TOOL_NOT_FOUND")).toBe(true);
    const after = await newTestSession(rt.db, "After", owner);

    const modes = async (team: typeof before) => Object.fromEntries((await toolPolicyOf(rt.db.sql, team, await rt.runtime.toolCatalog(team))).map((t) => [t.tool, t.mode]));
    expect(await modes(after)).toMatchObject({ workspace_write: "ask", workspace_delete: "off", workspace_read: "allow" });
    expect(await modes(before)).toMatchObject({ workspace_write: "allow", workspace_delete: "allow" });
    // The new team's rows say who set them; its owner changes them as any.
    expect((await rt.db.toolPolicy.findUniqueOrThrow({ where: { teamId_toolName: { teamId: after, toolName: "workspace_write" } } })).changedBy).toMatchObject({ name: "Instance owner" });
    await setToolMode(rt.db, { person: owner, teamId: after }, tools, "workspace_write", "allow");
    await setInstanceToolDefault(rt.db.sql, owner, tools, "workspace_delete", "allow");
    expect(await modes(after)).toMatchObject({ workspace_write: "allow", workspace_delete: "off" });
  });
});
