-- Models per teammate (docs/SPEC.md §15): the model a spawn chose ({provider, model}), kept on
-- the member row so recovery creates the child with it. Null (older rows): the Lead's model.

-- AlterTable
ALTER TABLE "team_members" ADD COLUMN "model" JSONB;
