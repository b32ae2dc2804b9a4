-- Team memory (memory/store.ts, SPEC.md §20): what agents propose to remember, decided by people.
-- A memory belongs to a team, or (team_id NULL) to the instance's shared memory that teams may
-- read. Text and tags are searched by full text (a generated tsvector under a GIN index; an
-- embedding column can sit beside it later). Its source is the transcript step that proposed it.
-- Edits keep each earlier text in memory_versions.

-- Tags joined for the search vector: array_to_string is only STABLE, a generated column needs IMMUTABLE.
CREATE FUNCTION memory_search_text(body TEXT, tags TEXT[]) RETURNS TEXT
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN body || ' ' || array_to_string(tags, ' ');

CREATE TABLE "memories" (
  "id" TEXT PRIMARY KEY,
  "team_id" TEXT,
  "text" TEXT NOT NULL,
  "tags" TEXT[] DEFAULT '{}',
  "status" TEXT NOT NULL DEFAULT 'proposed',
  "version" INTEGER NOT NULL DEFAULT 1,
  "replaces_id" TEXT,
  "source_session_id" TEXT,
  "source_seq" INTEGER,
  "source_member" TEXT,
  "tool_call_key" TEXT UNIQUE,
  "proposed_by" JSONB NOT NULL,
  "decided_by" JSONB,
  "decided_at" TIMESTAMPTZ(3),
  "note" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "search" tsvector GENERATED ALWAYS AS (to_tsvector('english', memory_search_text("text", "tags"))) STORED
);
CREATE INDEX "memories_search_idx" ON "memories" USING GIN ("search");
CREATE INDEX "memories_team_id_status_updated_at_idx" ON "memories" ("team_id", "status", "updated_at");

CREATE TABLE "memory_versions" (
  "memory_id" TEXT NOT NULL REFERENCES "memories"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "version" INTEGER NOT NULL,
  "text" TEXT NOT NULL,
  "tags" TEXT[] DEFAULT '{}',
  "edited_by" JSONB NOT NULL,
  "edited_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY ("memory_id", "version")
);

-- A team's memory settings: proposals approved as they come; the instance's shared memory read too.
ALTER TABLE "teams" ADD COLUMN "memory_auto_approve" BOOLEAN NOT NULL DEFAULT false,
  ADD COLUMN "memory_shared" BOOLEAN NOT NULL DEFAULT false;
