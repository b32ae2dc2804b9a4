-- The tool policy a new team starts with (SPEC.md §17), set by the instance owner: copied into
-- the team's own policy when it is created. No row: the tool's built-in default.
CREATE TABLE "instance_tool_defaults" (
    "tool_name" TEXT NOT NULL,
    "mode" TEXT NOT NULL,
    "changed_by" JSONB NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "instance_tool_defaults_pkey" PRIMARY KEY ("tool_name"),
    CONSTRAINT "instance_tool_defaults_mode_check" CHECK ("mode" IN ('allow', 'ask', 'off'))
);
