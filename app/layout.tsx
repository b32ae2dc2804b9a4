import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { Providers } from "~/components/trpc";
import "./globals.css";
import "./room.css";

export const metadata: Metadata = {
  title: "Agent Teams",
  description: "Prompt a Lead agent and watch its team work live.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header className="topbar">
          <Link href="/" className="brand">
            Agent Teams
          </Link>
        </header>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
