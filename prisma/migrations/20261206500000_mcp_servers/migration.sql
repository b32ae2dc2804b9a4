-- A team's MCP servers (SPEC.md §18), added by its owners: a Streamable HTTP endpoint, its
-- headers (a bearer token among them) encrypted at rest, and what the last connection found.
CREATE TABLE "mcp_servers" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    -- The request headers as JSON, AES-256-GCM encrypted with MCP_SECRETS_KEY (mcp/secrets.ts).
    "headers_encrypted" TEXT,
    "created_by" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    -- unknown | connected | failing
    "status" TEXT NOT NULL DEFAULT 'unknown',
    -- The tools the last connection listed (name, description, input schema, annotations).
    "tools" JSONB NOT NULL DEFAULT '[]',
    "last_error" TEXT,
    "checked_at" TIMESTAMPTZ(3),
    CONSTRAINT "mcp_servers_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "mcp_servers_status_check" CHECK ("status" IN ('unknown', 'connected', 'failing'))
);
CREATE UNIQUE INDEX "mcp_servers_team_id_name_key" ON "mcp_servers"("team_id", "name");
