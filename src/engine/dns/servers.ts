/**
 * `Resolver.setServers` takes IP addresses only ("1.2.3.4", "1.2.3.4:5353", "::1",
 * "[::1]:5353"); a host name there is a configuration mistake worth naming at start-up.
 */
import { isIP, isIPv4, isIPv6 } from 'node:net';

/** The entries of `servers` that are not an IP address with an optional port. */
export function invalidDnsServers(servers: readonly string[]): string[] {
  return servers.filter((entry) => !isDnsServer(entry));
}

function isDnsServer(entry: string): boolean {
  if (isIP(entry) !== 0) return true;
  const bracketed = /^\[([^\]]+)\]:(\d{1,5})$/.exec(entry);
  if (bracketed) return isIPv6(bracketed[1]!) && isPort(bracketed[2]!);
  const withPort = /^([^:]+):(\d{1,5})$/.exec(entry);
  return withPort !== null && isIPv4(withPort[1]!) && isPort(withPort[2]!);
}

function isPort(raw: string): boolean {
  const port = Number(raw);
  return port >= 1 && port <= 65535;
}
