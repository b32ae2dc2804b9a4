import type http from "node:http";
import { context, SpanKind, SpanStatusCode, trace, type Link, type SpanContext, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { ActivityHub } from "../live/activity";
import type { SqlRunner } from "../db/sql";
import { asSessionId, type SessionId } from "../ids";
import type { SessionEvent } from "../runtime/events";
import { readEventsBefore } from "../runtime/session-log";

// OpenTelemetry traces over OTLP/HTTP, on when OTEL_EXPORTER_OTLP_ENDPOINT is set: a server span
// per HTTP request, and per agent turn one trace in the GenAI agent conventions — `invoke_agent`
// for the turn, a `chat` span per model call and an `execute_tool` span per tool call, with
// `gen_ai.*` attributes — linked to the request span of the prompt that started it (its
// traceparent travels with the prompt). The turn's spans are built from the session events this
// process appends (their commit times), so the runtime knows nothing of tracing; a turn that
// parked and was taken up by another process is read back from the log by the one that ends it. Message
// contents stay out unless OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.

export interface Tracing {
  /** Runs the request's handling inside its server span (ended with the response). */
  request(req: http.IncomingMessage, res: http.ServerResponse, route: string, handle: () => void): void;
  /** The current request span as a W3C traceparent (stored with a prompt), if tracing is on. */
  traceparent(): string | undefined;
  /** Sends what is buffered and stops. */
  close(): Promise<void>;
}

const OFF: Tracing = { request: (_req, _res, _route, handle) => handle(), traceparent: () => undefined, close: async () => undefined };

let contextManagerSet = false;

/** Turns buffered per agent; a turn that ends in another process is dropped past this. */
const MAX_OPEN_TURNS = 10_000;

export function createTracing(opts: {
  endpoint: string | undefined;
  hub: ActivityHub;
  /** Where a turn that ran partly in another process is read back from. */
  db: SqlRunner;
  captureContent: boolean;
  log?: (line: string) => void;
}): Tracing {
  if (!opts.endpoint) return OFF;
  if (!contextManagerSet) {
    // One per process: request handling keeps its span as the active context across awaits.
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManagerSet = true;
  }
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "agent-teams" }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${opts.endpoint.replace(/\/$/, "")}/v1/traces` }))],
  });
  const tracer = provider.getTracer("agent-teams");
  const turns = new Map<string, OpenTurn>();
  /** Turns being read back from the log: closing waits for them, so their spans are sent. */
  const reads = new Set<Promise<unknown>>();
  const off = opts.hub.on("*", (a) => {
    for (const e of a.events ?? []) {
      const p = e.payload;
      if (p.kind === "turn_start") {
        if (turns.size >= MAX_OPEN_TURNS) turns.delete(turns.keys().next().value!);
        turns.set(a.sessionId, { turnId: p.turnId, events: [e], lastSeq: e.seq, whole: true });
        continue;
      }
      const open = turns.get(a.sessionId);
      if (open) {
        // Another process appended in between (the turn parked, and was taken up elsewhere).
        if (e.seq !== open.lastSeq + 1) open.whole = false;
        open.lastSeq = e.seq;
        if (p.kind !== "assistant_delta") open.events.push(e);
      }
      if (p.kind !== "turn_end") continue;
      turns.delete(a.sessionId);
      if (open?.whole && open.turnId === p.turnId) {
        turnSpans(tracer, a.sessionId, open.events, opts.captureContent);
      } else {
        // Part of the turn ran in another process: its events come from the log.
        const reading = readTurn(opts.db, asSessionId(a.sessionId), p.turnId, e.seq)
          .then((events) => events && turnSpans(tracer, a.sessionId, events, opts.captureContent))
          .catch((err: unknown) => opts.log?.(`tracing: reading turn ${p.turnId} failed: ${err instanceof Error ? err.message : String(err)}`))
          .finally(() => reads.delete(reading));
        reads.add(reading);
      }
    }
  });

  return {
    request(req, res, route, handle) {
      const span = tracer.startSpan(`${req.method ?? "GET"} ${route}`, {
        kind: SpanKind.SERVER,
        attributes: { "http.request.method": req.method ?? "GET", "url.path": req.url?.split("?")[0] ?? "", "http.route": route },
      });
      res.once("close", () => {
        span.setAttribute("http.response.status_code", res.statusCode);
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      });
      context.with(trace.setSpan(context.active(), span), handle);
    },
    traceparent() {
      const sc = trace.getSpan(context.active())?.spanContext();
      return sc && trace.isSpanContextValid(sc) ? `00-${sc.traceId}-${sc.spanId}-0${sc.traceFlags.toString(16)}` : undefined;
    },
    async close() {
      off();
      await Promise.all(reads);
      await provider.shutdown();
    },
  };
}

/** A turn this process saw start: its events so far (no deltas), and whether it saw every one. */
interface OpenTurn {
  turnId: string;
  events: SessionEvent[];
  lastSeq: number;
  whole: boolean;
}

/** The most of a turn read back from the log (pages of TURN_PAGE events, newest first). */
const TURN_PAGES = 20;
const TURN_PAGE = 500;

/** The events of the turn that ended at `endSeq` (no deltas), from its turn_start; null if it is further back than the pages read. */
async function readTurn(db: SqlRunner, sessionId: SessionId, turnId: string, endSeq: number): Promise<SessionEvent[] | null> {
  const read: SessionEvent[][] = [];
  for (let before = endSeq + 1, page = 0; page < TURN_PAGES && before > 1; page++) {
    const events = await readEventsBefore(db, sessionId, before, TURN_PAGE);
    if (events.length === 0) return null;
    const start = events.findLastIndex((e) => e.payload.kind === "turn_start" && e.payload.turnId === turnId);
    read.unshift(events.slice(Math.max(start, 0)));
    if (start >= 0) return read.flat().filter((e) => e.payload.kind !== "assistant_delta");
    before = events[0]!.seq;
  }
  return null;
}

function fromTraceparent(tp: string): SpanContext | null {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(tp);
  return m ? { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true } : null;
}

/** A finished turn's spans: `invoke_agent` (a new trace), and under it `chat` and `execute_tool`. */
function turnSpans(tracer: Tracer, sessionId: string, events: SessionEvent[], captureContent: boolean): void {
  const first = events[0]!;
  const last = events.at(-1)!;
  if (first.payload.kind !== "turn_start" || last.payload.kind !== "turn_end") return;
  const links: Link[] = events.flatMap((e) => {
    const p = e.payload;
    const sc = p.kind === "user_message" && p.source.kind === "human" && p.source.traceparent ? fromTraceparent(p.source.traceparent) : null;
    return sc ? [{ context: sc, attributes: { "agent_teams.link": "prompt" } }] : [];
  });
  const model = events.flatMap((e) => (e.payload.kind === "assistant_message" ? [e.payload.model] : []))[0] ?? "unknown";
  const root = tracer.startSpan(
    "invoke_agent",
    {
      root: true,
      kind: SpanKind.INTERNAL,
      startTime: first.createdAt,
      links,
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.id": sessionId,
        "gen_ai.conversation.id": sessionId,
        "gen_ai.provider.name": model.split(":")[0] ?? "unknown",
        "agent_teams.turn.id": first.payload.turnId,
        "agent_teams.turn.end_reason": last.payload.reason,
      },
    },
  );
  if (last.payload.reason === "error") root.setStatus({ code: SpanStatusCode.ERROR, message: last.payload.error });
  const parent = trace.setSpan(context.active(), root);
  let since = first.createdAt;
  for (const e of events.slice(1)) {
    const p = e.payload;
    if (p.kind === "assistant_message") {
      const [provider, ...name] = p.model.split(":");
      const span = tracer.startSpan(
        `chat ${name.join(":") || p.model}`,
        {
          kind: SpanKind.CLIENT,
          startTime: since,
          attributes: {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider ?? "unknown",
            "gen_ai.request.model": name.join(":") || p.model,
            "gen_ai.usage.input_tokens": p.usage?.inputTokens ?? 0,
            "gen_ai.usage.output_tokens": p.usage?.outputTokens ?? 0,
            "gen_ai.response.finish_reasons": [p.interrupted ? "interrupted" : p.toolCalls.length > 0 ? "tool_calls" : "stop"],
            ...(captureContent ? { "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: p.text }] }]) } : {}),
          },
        },
        parent,
      );
      span.end(e.createdAt);
    } else if (p.kind === "tool_result") {
      const span = tracer.startSpan(
        `execute_tool ${p.toolName}`,
        {
          kind: SpanKind.INTERNAL,
          startTime: since,
          attributes: {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": p.toolName,
            "gen_ai.tool.call.id": p.toolCallId,
            ...(p.isError ? { "error.type": p.errorCode ?? "error" } : {}),
          },
        },
        parent,
      );
      if (p.isError) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end(e.createdAt);
    }
    since = e.createdAt;
  }
  root.end(last.createdAt);
}
