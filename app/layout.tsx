import type { Metadata } from "next";
import type { ReactNode } from "react";
import { Providers } from "~/components/trpc";
import "./globals.css";

export const metadata: Metadata = {
  title: "Agent Teams",
  description: "Prompt a Lead agent and watch its team work live.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header className="topbar">
          <a href="/" className="brand">
            Agent Teams
          </a>
        </header>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
