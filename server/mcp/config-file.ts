import { readFileSync } from "node:fs";
import { z } from "zod";
import { MCP_SERVER_NAME } from "./servers";

// Stdio MCP servers run as child processes of the app, so only the instance owner names them,
// in a JSON file on the server (MCP_SERVERS_FILE), never through the browser or the API. The
// shape is the one MCP hosts share:
//   { "mcpServers": { "<name>": { "command": "…", "args": ["…"], "env": { "KEY": "…" } } } }
// Each server is offered to every team of the instance (owners may turn its tools off).

const ConfigFileSchema = z.object({
  mcpServers: z.record(
    z.string().regex(MCP_SERVER_NAME, "A server name is 1 to 32 lowercase letters, digits, - or _, starting with a letter"),
    z.object({
      command: z.string().min(1),
      args: z.array(z.string()).default([]),
      env: z.record(z.string(), z.string()).default({}),
      cwd: z.string().optional(),
    }),
  ),
});

export interface StdioServerConfig {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

const read = new Map<string, StdioServerConfig[]>();

/**
 * The servers the file names (none when `path` is unset), read once per process; a missing or
 * malformed file throws what is wrong (start-up reads it first, so the app does not start).
 */
export function readMcpServersFile(path: string | undefined): StdioServerConfig[] {
  if (!path) return [];
  const known = read.get(path);
  if (known) return known;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new Error(`MCP_SERVERS_FILE (${path}) could not be read as JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const parsed = ConfigFileSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`MCP_SERVERS_FILE (${path}) is not valid: ${z.prettifyError(parsed.error)}`);
  const servers = Object.entries(parsed.data.mcpServers).map(([name, s]) => ({ name, ...s }));
  read.set(path, servers);
  return servers;
}
