// Database administration on a PostgreSQL server: connection URLs, one short-lived client,
// creating, dropping and listing databases. Migrations are migrate.ts's.
import pg from "pg";

/** `serverUrl` with its database replaced by `name`. */
export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${encodeURIComponent(name)}`;
  return url.toString();
}

/** `url` fit for a log line or an error message: the password masked. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparseable database URL)";
  }
}

/**
 * Runs `fn` on one connection, closed afterwards. A server-side disconnect fails the pending
 * query; `onError` also hears about it (without a listener pg would crash the process).
 */
export async function withClient<T>(
  config: string | pg.ClientConfig,
  fn: (client: pg.Client) => Promise<T>,
  opts: { onError?: (err: Error) => void } = {},
): Promise<T> {
  const client = new pg.Client(typeof config === "string" ? { connectionString: config } : config);
  client.on("error", opts.onError ?? (() => {}));
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

export async function createDatabase(
  adminUrl: string,
  name: string,
  opts: { template?: string } = {},
): Promise<void> {
  await withClient(adminUrl, async (client) => {
    const template = opts.template ? ` TEMPLATE ${client.escapeIdentifier(opts.template)}` : "";
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}${template}`);
  });
}

/** Drops even while clients are still connected (FORCE, PostgreSQL 13+). Missing is fine. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
  });
}

/** Names of the databases starting with `prefix`, in descending order. */
export async function listDatabases(adminUrl: string, prefix: string): Promise<string[]> {
  return withClient(adminUrl, async (client) => {
    const { rows } = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY datname DESC`,
      [prefix],
    );
    return rows.map((r) => r.datname);
  });
}
