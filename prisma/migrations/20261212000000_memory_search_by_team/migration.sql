-- Memories are always read within a scope. A team's: one GIN over the team and the search
-- vector (btree_gin), used for its searches (the words' entries intersected with the team's),
-- its lists and its counts; no btree on the team, so no plan (a generic one, which cannot know
-- how many memories the team has) scans a large team's rows one by one to rank them. The
-- shared memory's: a GIN of its own over its approved rows.
CREATE EXTENSION IF NOT EXISTS btree_gin;
DROP INDEX "memories_search_idx";
DROP INDEX "memories_team_id_status_updated_at_idx";
CREATE INDEX "memories_team_search_idx" ON "memories" USING GIN ("team_id", "search") WHERE "team_id" IS NOT NULL;
CREATE INDEX "memories_shared_search_idx" ON "memories" USING GIN ("search") WHERE "team_id" IS NULL AND "status" = 'approved';

-- Each team's count of approved memories, kept by a trigger: a step's context skips the search
-- for a team with none (a GIN scan reads each word's entries of every team).
ALTER TABLE "teams" ADD COLUMN "memories_approved" INTEGER NOT NULL DEFAULT 0;
UPDATE "teams" t SET "memories_approved" = (SELECT count(*) FROM "memories" m WHERE m."team_id" = t."id" AND m."status" = 'approved');
-- Statement triggers over the transition tables: a statement that approves many (a fork's
-- copy) changes each team's row once.
CREATE FUNCTION memories_count_approved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE "teams" t SET "memories_approved" = t."memories_approved" + d.n
      FROM (SELECT "team_id", count(*) AS n FROM added WHERE "status" = 'approved' AND "team_id" IS NOT NULL GROUP BY "team_id") d WHERE t."id" = d."team_id";
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE "teams" t SET "memories_approved" = t."memories_approved" - d.n
      FROM (SELECT "team_id", count(*) AS n FROM removed WHERE "status" = 'approved' AND "team_id" IS NOT NULL GROUP BY "team_id") d WHERE t."id" = d."team_id";
  ELSE
    UPDATE "teams" t SET "memories_approved" = t."memories_approved" + d.n
      FROM (SELECT "team_id", sum(n) AS n FROM (
              SELECT "team_id", 1 AS n FROM added WHERE "status" = 'approved' AND "team_id" IS NOT NULL
              UNION ALL
              SELECT "team_id", -1 AS n FROM removed WHERE "status" = 'approved' AND "team_id" IS NOT NULL) c
            GROUP BY "team_id") d
      WHERE t."id" = d."team_id" AND d.n <> 0;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER "memories_count_inserted" AFTER INSERT ON "memories" REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION memories_count_approved();
CREATE TRIGGER "memories_count_updated" AFTER UPDATE ON "memories" REFERENCING OLD TABLE AS removed NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION memories_count_approved();
CREATE TRIGGER "memories_count_deleted" AFTER DELETE ON "memories" REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION memories_count_approved();
