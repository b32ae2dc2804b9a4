"use client";

import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, retryLink, splitLink } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { useState, type ReactNode } from "react";
import superjson from "superjson";
import { MAX_BATCH_SIZE } from "~/shared/batch";
import type { AppRouter } from "./api-types";
import { feedRetries, retryDelayMs } from "./app-error";
import { TooltipProvider } from "./ui/tooltip";

// The browser's tRPC client: queries and mutations batched over HTTP, subscriptions over
// Server-Sent Events (which resume from the last event id after a reconnect). The browser
// reconnects an event stream by itself only after a network error (tRPC's link also after an
// internal error); a feed that failed otherwise (a proxy's 503 while the server is away) is
// opened again here, from its last event id.
// Queries and mutations are retried where they are used (React Query), not here.

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

export function Providers({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () => new QueryClient({ defaultOptions: { queries: { staleTime: 5_000, refetchOnWindowFocus: false } } }),
  );
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      links: [
        retryLink({ retry: ({ op, error }) => op.type === "subscription" && feedRetries(error), retryDelayMs }),
        splitLink({
          condition: (op) => op.type === "subscription",
          true: httpSubscriptionLink({ url: "/api/trpc", transformer: superjson }),
          false: httpBatchLink({ url: "/api/trpc", transformer: superjson, maxItems: MAX_BATCH_SIZE }),
        }),
      ],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        <TooltipProvider>{children}</TooltipProvider>
      </TRPCProvider>
    </QueryClientProvider>
  );
}
