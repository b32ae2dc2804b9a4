import { defineConfig } from "prisma/config";

// Only `prisma generate/validate/format` run here (see docs/ARCHITECTURE.md: migrations are
// applied by server/db/migrate.ts, compatible with `prisma migrate deploy`).
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost:5432/agent_teams" },
});
