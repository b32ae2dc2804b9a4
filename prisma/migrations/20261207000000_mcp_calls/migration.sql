-- MCP tool calls (mcp/calls.ts): the intent, committed before the request goes out. A call
-- whose intent is here but whose result never reached the session log is reported to the model
-- as "outcome unknown" and never sent again.
CREATE TABLE "mcp_calls" (
    "call_key" TEXT NOT NULL,
    "session_id" TEXT NOT NULL,
    "server_name" TEXT NOT NULL,
    "tool_name" TEXT NOT NULL,
    "arguments" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "mcp_calls_pkey" PRIMARY KEY ("call_key")
);
CREATE INDEX "mcp_calls_session_id_idx" ON "mcp_calls"("session_id");

-- Stdio MCP servers the instance owner configured in MCP_SERVERS_FILE (mcp/config-file.ts),
-- offered to every team: what the last connection from any process found.
CREATE TABLE "instance_mcp_servers" (
    "name" TEXT NOT NULL,
    -- unknown | connected | failing
    "status" TEXT NOT NULL DEFAULT 'unknown',
    "tools" JSONB NOT NULL DEFAULT '[]',
    "last_error" TEXT,
    "checked_at" TIMESTAMPTZ(3),
    CONSTRAINT "instance_mcp_servers_pkey" PRIMARY KEY ("name"),
    CONSTRAINT "instance_mcp_servers_status_check" CHECK ("status" IN ('unknown', 'connected', 'failing'))
);
