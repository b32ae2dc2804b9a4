-- Tool effects that span transactions remember the tool call that asked for them, so a driver
-- that finds the call without a result (after a crash) can find the effect and report it.

-- AlterTable
ALTER TABLE "team_members" ADD COLUMN "prompt" TEXT,
ADD COLUMN "fork_through_seq" INTEGER,
ADD COLUMN "tool_call_key" TEXT;

-- AlterTable
ALTER TABLE "team_messages" ADD COLUMN "tool_call_key" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "team_members_tool_call_key_key" ON "team_members"("tool_call_key");

-- CreateIndex
CREATE UNIQUE INDEX "team_messages_tool_call_key_key" ON "team_messages"("tool_call_key");
