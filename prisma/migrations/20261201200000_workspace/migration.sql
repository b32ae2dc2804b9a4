-- The team workspace (docs/SPEC.md §14): per-team counters, content stored once per distinct
-- content, each path's head, and every version.
-- Paths use the "C" collation: ordered byte by byte, so listings, cursors and prefix ranges
-- agree whatever the database's locale.

-- CreateTable
CREATE TABLE "workspaces" (
    "team_id" TEXT NOT NULL,
    "file_count" INTEGER NOT NULL DEFAULT 0,
    "total_bytes" BIGINT NOT NULL DEFAULT 0,
    "last_change" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workspaces_pkey" PRIMARY KEY ("team_id")
);

-- CreateTable
CREATE TABLE "workspace_blobs" (
    "sha256" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "bytes" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workspace_blobs_pkey" PRIMARY KEY ("sha256")
);

-- CreateTable
CREATE TABLE "workspace_files" (
    "team_id" TEXT NOT NULL,
    "path" TEXT COLLATE "C" NOT NULL,
    "version" INTEGER NOT NULL,
    "blob_sha" TEXT,
    "bytes" INTEGER NOT NULL,

    CONSTRAINT "workspace_files_pkey" PRIMARY KEY ("team_id","path")
);

-- CreateTable
CREATE TABLE "workspace_versions" (
    "team_id" TEXT NOT NULL,
    "path" TEXT COLLATE "C" NOT NULL,
    "version" INTEGER NOT NULL,
    "change" INTEGER NOT NULL,
    "blob_sha" TEXT,
    "bytes" INTEGER NOT NULL,
    "author" JSONB NOT NULL,
    "task_ids" TEXT[],
    "warnings" TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workspace_versions_pkey" PRIMARY KEY ("team_id","path","version")
);

-- CreateIndex
CREATE UNIQUE INDEX "workspace_versions_team_id_change_key" ON "workspace_versions"("team_id", "change");
