import { BlockList, isIP } from "node:net";

// Addresses a webhook may not reach unless the instance owner allows it: loopback, private
// networks, link-local (cloud metadata services live there), shared, multicast, reserved and
// unspecified ranges, and the IPv6 forms that carry an IPv4 address.

const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  PRIVATE.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
  // Ways to write an IPv4 address inside IPv6: NAT64, 6to4, Teredo.
  ["64:ff9b::", 96],
  ["2002::", 16],
  ["2001::", 32],
] as const) {
  PRIVATE.addSubnet(net, prefix, "ipv6");
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, "ipv4");
  if (family === 6) {
    // An IPv4 address written as IPv6 (::ffff:10.0.0.1) is checked as IPv4.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    return mapped ? PRIVATE.check(mapped[1]!, "ipv4") : PRIVATE.check(address, "ipv6");
  }
  return true;
}
