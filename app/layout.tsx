import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
import { SKIP_SLOT_ID } from "~/components/skip-slot";
import { TopBar } from "~/components/top-bar";
import { Providers } from "~/components/trpc";
// Stylesheets in cascade order, in this one place: the tokens and bare elements, the kit, then
// each feature's styles (beside its components). Where two rules of equal weight meet, the later
// file wins, so a feature may adjust the kit but not the other way round.
import "./globals.css";
import "~/components/ui/ui.css";
import "~/components/markdown.css";
import "~/components/shell.css";
import "~/components/team-home.css";
import "~/components/room/room.css";
import "~/components/people/people.css";
import "~/components/control/control.css";
import "~/components/account/account.css";
import "~/components/files/files.css";
import "~/components/memory/memory.css";

// Icons and the web manifest are static files in public/ (manifest.webmanifest lists the
// install icons; its colours are --accent and --bg of globals.css).
export const metadata: Metadata = {
  title: "Agent Teams",
  description: "Prompt a Lead agent and watch its team work live.",
  icons: {
    icon: [
      { url: "/favicon.ico", sizes: "16x16 32x32 48x48" },
      { url: "/icon.svg", type: "image/svg+xml" },
    ],
    apple: { url: "/apple-touch-icon.png", sizes: "180x180" },
  },
  manifest: "/manifest.webmanifest",
};

export const viewport: Viewport = { themeColor: "#2454d6" };

// Every page is rendered per request: the CSP allows only scripts carrying the request's nonce
// ('strict-dynamic' ignores 'self'), and a page prerendered at build time has none.
export const dynamic = "force-dynamic";

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <div id={SKIP_SLOT_ID} />
        <Providers>
          <TopBar />
          {children}
        </Providers>
      </body>
    </html>
  );
}
