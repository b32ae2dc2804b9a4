import { z } from "zod";
import { CatalogEnvSchema } from "./models/catalog";
import { defaultModelOf } from "./models/known-models";
import { DEFAULT_RETRY_POLICY } from "./models/retry-policy";
import { DEFAULT_TEAM_LIMITS, DEFAULT_WORKSPACE_LIMITS, type TeamLimits, type WorkspaceLimits, WORKSPACE_FILE_BYTES_CEILING } from "../shared/limits";

// Validated once at start-up; every tunable of the runtime is here with its default.
const intMs = (def: number) => z.coerce.number().int().nonnegative().default(def);

const EnvSchema = z.object({
  DATABASE_URL: z.string().url().optional(),
  /**
   * The database server itself, when DATABASE_URL goes through a transaction-mode pooler
   * (PgBouncer): migrations and LISTEN use it, and statements through the pooler are never
   * prepared by name. Unset: DATABASE_URL is direct and used for everything.
   */
  DIRECT_DATABASE_URL: z.string().url().optional(),
  /**
   * Database connections of one app server process (runtime, feeds and requests share them):
   * with hundreds of streaming agents, steps wait for a connection long before Postgres is busy.
   */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(2).max(200).default(20),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default("localhost"),
  /**
   * The app's public URL. Its host is the only one served (DNS rebinding), its origin the only
   * one state-changing requests may come from, and https makes cookies Secure. Unset: the
   * local URL the server prints, reachable as localhost, 127.0.0.1 or [::1].
   */
  APP_URL: z.string().url().optional(),
  /** Signs session cookies; unset, the instance makes one at first start and keeps it in the database. */
  AUTH_SECRET: z.string().min(32).optional(),
  /**
   * Encrypts MCP servers' headers and tokens at rest (AES-256-GCM): 32 random bytes in base64
   * (`openssl rand -base64 32`). Unset, no secret can be stored.
   */
  MCP_SECRETS_KEY: z
    .string()
    .refine((k) => Buffer.from(k, "base64").length === 32, "MCP_SECRETS_KEY must be 32 bytes in base64 (openssl rand -base64 32)")
    .optional(),
  /**
   * A JSON file naming stdio MCP servers offered to every team (mcp/config-file.ts):
   * { "mcpServers": { "<name>": { "command": "…", "args": [], "env": {} } } }. Only the
   * instance owner writes it: its commands run on this server.
   */
  MCP_SERVERS_FILE: z.string().min(1).optional(),
  /** OpenTelemetry traces over OTLP/HTTP to this base URL (…/v1/traces); unset, no traces. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  /** Put prompt and reply text into GenAI spans (off: only sizes, models and tools). */
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: z.enum(["true", "false", "1", "0"]).default("false").transform((v) => v === "true" || v === "1"),
  /** The least severe log lines written (server/log.ts). */
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  /** Serves /metrics (Prometheus text) to `Authorization: Bearer <METRICS_TOKEN>`; unset, there is no /metrics. */
  METRICS_TOKEN: z.string().min(16, "METRICS_TOKEN must be at least 16 characters").optional(),
  /**
   * OpenID Connect single sign-on (people/sso.ts), beside email and password: the provider's
   * issuer URL (its discovery document is `<issuer>/.well-known/openid-configuration`), and this
   * app's client there. Its redirect URI is `<APP_URL>/api/auth/callback/oidc`.
   */
  OIDC_ISSUER: z.string().url().optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  /** The sign-in button's provider name ("Sign in with …"). */
  OIDC_NAME: z.string().min(1).max(40).default("single sign-on"),
  /** Sign-in (and sign-up, password change) attempts per client address per minute. */
  AUTH_SIGN_IN_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(10),
  /**
   * Behind one reverse proxy (TLS termination): take the client's address from the last
   * X-Forwarded-For entry it appends, so rate limits are per client, not per proxy. Only set
   * this when every request comes through that proxy.
   */
  TRUST_PROXY: z.enum(["true", "false", "1", "0"]).default("false").transform((v) => v === "true" || v === "1"),
  /**
   * On SIGTERM, how long /api/health/ready answers 503 before the app stops taking requests and
   * closes: set it to what your load balancer needs to notice (its check interval times the
   * failures it waits for). 0 closes at once.
   */
  SHUTDOWN_DRAIN_MS: intMs(0),
  /** Where the embedded Postgres keeps its data when DATABASE_URL is unset. */
  EMBEDDED_PG_DIR: z.string().default(".data/postgres"),
  EMBEDDED_PG_PORT: z.coerce.number().int().min(1).max(65535).default(54329),
  /** Pause between streamed chunks of the keyless scripted model, so a person can watch. */
  SCRIPTED_MODEL_DELAY_MS: intMs(40),
  AGENT_IDLE_EVICT_MS: intMs(5 * 60_000),
  AGENT_LEASE_TTL_MS: intMs(10_000),
  RUNTIME_RECOVERY_INTERVAL_MS: intMs(5_000),
  /** Estimated tokens of model-visible history above which compaction runs. */
  COMPACTION_BUDGET_TOKENS: z.coerce.number().int().positive().default(24_000),
  MAX_STEPS_PER_TURN: z.coerce.number().int().positive().default(256),
  /** Streamed text reaches the log (and other processes' viewers) at most this often per agent. */
  STREAM_FLUSH_MS: z.coerce.number().int().min(10).max(5_000).default(400),
  /** Agent Teams limits (shared/limits.ts; docs/SPEC.md §4, §7, §8). */
  TEAM_MAX_MEMBERS: z.coerce.number().int().min(1).max(64).default(DEFAULT_TEAM_LIMITS.maxMembers),
  TEAM_MAX_TASKS: z.coerce.number().int().min(1).max(10_000).default(DEFAULT_TEAM_LIMITS.maxTasks),
  TEAM_MESSAGE_MAX_BYTES: z.coerce.number().int().min(1).max(1_048_576).default(DEFAULT_TEAM_LIMITS.maxMessageBytes),
  TEAM_MAILBOX_MAX_PENDING: z.coerce.number().int().min(1).max(10_000).default(DEFAULT_TEAM_LIMITS.maxPending),
  /** Workspace limits (shared/limits.ts; docs/SPEC.md §14). */
  WORKSPACE_MAX_FILE_BYTES: z.coerce.number().int().min(1).max(WORKSPACE_FILE_BYTES_CEILING).default(DEFAULT_WORKSPACE_LIMITS.maxFileBytes),
  WORKSPACE_MAX_FILES: z.coerce.number().int().min(1).max(1_000_000).default(DEFAULT_WORKSPACE_LIMITS.maxFiles),
  WORKSPACE_MAX_BYTES: z.coerce.number().int().min(1).max(16 * 1024 * 1_048_576).default(DEFAULT_WORKSPACE_LIMITS.maxBytes),
  OPENAI_BASE_URL: z.string().url().optional(),
  OPENAI_API_KEY: z.string().optional(),
  OPENAI_MODEL: z.string().default(defaultModelOf("openai-compatible")),
  ANTHROPIC_BASE_URL: z.string().url().optional(),
  ANTHROPIC_API_KEY: z.string().optional(),
  ANTHROPIC_MODEL: z.string().default(defaultModelOf("anthropic")),
  /** The offered models with labels and prices (models/catalog.ts), JSON. */
  MODELS: CatalogEnvSchema,
  /** Real providers (models/resilience.ts): retries of transient failures after the first attempt. */
  MODEL_MAX_RETRIES: z.coerce.number().int().min(0).max(20).default(DEFAULT_RETRY_POLICY.maxRetries),
  /** The first retry's backoff ceiling; each retry doubles it (full jitter), up to MODEL_RETRY_MAX_MS. */
  MODEL_RETRY_BASE_MS: intMs(DEFAULT_RETRY_POLICY.baseDelayMs),
  /** The longest backoff of our own. */
  MODEL_RETRY_MAX_MS: intMs(DEFAULT_RETRY_POLICY.maxDelayMs),
  /** The longest wait a provider's Retry-After is honoured for; asking for longer is taken as a refusal. */
  MODEL_RETRY_AFTER_MAX_MS: intMs(DEFAULT_RETRY_POLICY.maxRetryAfterMs),
  /** Nothing from the provider for this long: the attempt is abandoned and retried. */
  MODEL_FIRST_TOKEN_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  /** One attempt longer than this is cut (not retried); streamed text stays as an interrupted reply. */
  MODEL_REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().default(600_000),
  /** Concurrent requests per provider family in this process; more wait their turn, in order. */
  OPENAI_MAX_CONCURRENT_REQUESTS: z.coerce.number().int().min(1).max(1000).default(8),
  ANTHROPIC_MAX_CONCURRENT_REQUESTS: z.coerce.number().int().min(1).max(1000).default(8),
}).refine((env) => [env.OIDC_ISSUER, env.OIDC_CLIENT_ID, env.OIDC_CLIENT_SECRET].every((v) => v === undefined) || (env.OIDC_ISSUER && env.OIDC_CLIENT_ID && env.OIDC_CLIENT_SECRET), {
  message: "OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET go together: set all three, or none",
  path: ["OIDC_ISSUER"],
});

export type Env = z.infer<typeof EnvSchema>;

export function parseEnv(source: Record<string, string | undefined> = process.env): Env {
  const parsed = EnvSchema.safeParse(
    Object.fromEntries(Object.entries(source).filter(([, v]) => v !== "")),
  );
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid environment:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

/** The team limits the environment sets. */
export function teamLimitsOf(env: Env): TeamLimits {
  return {
    maxMembers: env.TEAM_MAX_MEMBERS,
    maxTasks: env.TEAM_MAX_TASKS,
    maxMessageBytes: env.TEAM_MESSAGE_MAX_BYTES,
    maxPending: env.TEAM_MAILBOX_MAX_PENDING,
  };
}

/** The workspace limits the environment sets. */
export function workspaceLimitsOf(env: Env): WorkspaceLimits {
  return { maxFileBytes: env.WORKSPACE_MAX_FILE_BYTES, maxFiles: env.WORKSPACE_MAX_FILES, maxBytes: env.WORKSPACE_MAX_BYTES };
}
