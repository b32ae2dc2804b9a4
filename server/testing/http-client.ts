import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import { EventSource } from "eventsource";
import superjson from "superjson";
import type { AppRouter } from "../trpc/root";

// A tRPC client over real HTTP (batching for queries and mutations, SSE for feeds) as one
// person: a browser with its session cookie (and the app's Origin, as its pages send), or a
// script with an API token (no Origin, no cookie). Without either it is anonymous.

export type HttpIdentity = { cookie: string } | { token: string } | null;

export function headersOf(baseUrl: string, who: HttpIdentity): Record<string, string> {
  if (who === null) return { origin: baseUrl };
  if ("token" in who) return { authorization: `Bearer ${who.token}` };
  return { cookie: who.cookie, origin: baseUrl };
}

export function httpClient(baseUrl: string, who: HttpIdentity) {
  const url = `${baseUrl}/api/trpc`;
  const headers = headersOf(baseUrl, who);
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({
          url,
          transformer: superjson,
          EventSource,
          eventSourceOptions: {
            fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, ...headers } }),
          },
        }),
        false: httpBatchLink({ url, transformer: superjson, headers }),
      }),
    ],
  });
}
