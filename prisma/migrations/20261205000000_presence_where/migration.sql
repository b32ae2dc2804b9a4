-- Presence says where a person is in the room (a centre view, a file, the board) and what they
-- are editing (a task or a file), beside the agent they watch and type to.
ALTER TABLE "presence" ADD COLUMN "place" TEXT NOT NULL DEFAULT 'agent';
ALTER TABLE "presence" ADD COLUMN "file_path" TEXT;
ALTER TABLE "presence" ADD COLUMN "editing_task" TEXT;
ALTER TABLE "presence" ADD COLUMN "editing_file" TEXT;
