/**
 * Egresses: the ways out of this machine that a mail server sees as different clients. A server
 * limits and judges each client address (Postfix's `smtpd_client_connection_count_limit`, RBL
 * checks, reputation), so with several source addresses (`--source-address`, each optionally with
 * its own HELO name) or several SOCKS5 proxies (`--proxy`) the engine keeps its politeness per
 * (egress, MX host) pair: the per-host session cap, the back-off and the reject budget hold for
 * each pair, and an egress that a host refuses by policy rests for that host while the others
 * carry on (docs/batch-engine.md, "Egress pools").
 *
 * What an egress changes is only where a connection comes from: the MX addresses it connects to
 * are the resolver's, already through the internal-address check (internal-address.ts), whatever
 * the egress. A proxy's own address is the operator's configuration and is not checked: a SOCKS
 * proxy on this machine or inside the network is the normal set-up.
 */
import { isIP } from 'node:net';
import type { SocksProxyOptions } from '../smtp/connection.js';
import { parseProxyUrl } from '../smtp/connection.js';
import type { SmtpReply } from '../smtp/reply.js';
import type { SessionStage } from '../smtp/session.js';
import { findReplyPattern, patternText } from '../smtp/reply-patterns.js';

/** One way out: a local source address, a SOCKS5 proxy, or the system's choice. */
export interface Egress {
  /**
   * Stable across processes, so that workers sharing Redis share the caps of one egress: the
   * source address, the proxy as `socks5://host:port` (never its credentials), or `default`.
   */
  readonly id: string;
  /** The local address to bind (`net.connect`'s `localAddress`); null: the system's choice. */
  readonly localAddress: string | null;
  /** The name sent in EHLO/HELO from this egress (its reverse DNS should match it). */
  readonly heloName: string;
  readonly proxy: SocksProxyOptions | null;
}

/** The id of the one egress there is when no source address or proxy is configured. */
export const DEFAULT_EGRESS_ID = 'default';

/**
 * How long an egress that a host refused by policy stays away from that host (while others carry
 * on). Blocklist entries and per-address throttles last from minutes to days; 15 minutes keeps a
 * long batch from knocking again every back-off, and lets a short throttle pass within a job.
 */
export const DEFAULT_EGRESS_REST_MS = 15 * 60_000;

/** A `--source-address` entry: `ip` or `ip=helo-name`. */
export interface SourceAddress {
  address: string;
  heloName: string | null;
}

// A HELO name: a host name (RFC 5321 §4.1.1.1 "Domain"), letters, digits, hyphens and dots.
const HELO_NAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** Parses one `ip` or `ip=helo-name` entry; throws an Error saying what is wrong. */
export function parseSourceAddress(raw: string): SourceAddress {
  const text = raw.trim();
  const eq = text.indexOf('=');
  const address = (eq < 0 ? text : text.slice(0, eq)).trim();
  const heloName = eq < 0 ? null : text.slice(eq + 1).trim();
  if (isIP(address) === 0) throw new Error(`"${raw}" is not an IP address (ip or ip=helo-name)`);
  if (heloName !== null && !HELO_NAME.test(heloName))
    throw new Error(`"${raw}": "${heloName}" is not a host name for HELO`);
  return { address, heloName };
}

/** What the egresses are built from: the engine's SMTP options. */
export interface EgressSettings {
  heloName: string;
  /** `ip` or `ip=helo-name` entries. */
  sourceAddresses?: readonly string[];
  /** socks5:// URLs. */
  proxies: readonly string[];
}

/**
 * The egress pool of a set of SMTP options: one per source address, then one per proxy (which
 * sends the global HELO name); the single default egress when there are none.
 */
export function buildEgresses(settings: EgressSettings): Egress[] {
  const egresses: Egress[] = [];
  const seen = new Set<string>();
  const add = (egress: Egress): void => {
    if (seen.has(egress.id)) return;
    seen.add(egress.id);
    egresses.push(egress);
  };
  for (const raw of settings.sourceAddresses ?? []) {
    const source = parseSourceAddress(raw);
    add({
      id: source.address,
      localAddress: source.address,
      heloName: source.heloName ?? settings.heloName,
      proxy: null,
    });
  }
  for (const raw of settings.proxies) {
    const proxy = parseProxyUrl(raw);
    const host = proxy.host.includes(':') ? `[${proxy.host}]` : proxy.host;
    add({ id: `socks5://${host}:${proxy.port}`, localAddress: null, heloName: settings.heloName, proxy });
  }
  if (egresses.length === 0)
    add({ id: DEFAULT_EGRESS_ID, localAddress: null, heloName: settings.heloName, proxy: null });
  return egresses;
}

/**
 * The key of an (egress, MX host address) pair: session slots, failure streaks and back-off, in
 * this process and in Redis. The default egress keys by the host alone, as before egress pools,
 * so a deployment that configures none keeps its keys.
 */
export function pairKey(egress: Egress, hostAddress: string): string {
  return egress.id === DEFAULT_EGRESS_ID ? hostAddress : `${egress.id}|${hostAddress}`;
}

/**
 * Whether `egress` can reach `hostAddress`: a bound source address only reaches hosts of its own
 * family (an IPv4 source cannot connect to an IPv6 MX); a proxy or the default reaches any.
 */
export function reaches(egress: Egress, hostAddress: string): boolean {
  if (egress.localAddress === null) return true;
  return isIP(egress.localAddress) === isIP(hostAddress);
}

/**
 * The egresses that can reach `hostAddress`; when none of the pool's can (only IPv4 sources for
 * an IPv6-only MX), the system's choice, so that the host is still asked.
 */
export function egressesFor(pool: readonly Egress[], hostAddress: string): readonly Egress[] {
  const usable = pool.filter((egress) => reaches(egress, hostAddress));
  if (usable.length > 0) return usable.length === pool.length ? pool : usable;
  return [{ id: DEFAULT_EGRESS_ID, localAddress: null, heloName: pool[0]!.heloName, proxy: null }];
}

// Postfix's "421 4.7.0 Error: too many errors" is about the session's own commands, not the
// client's address: a new session from the same address is welcome.
const SESSION_ERRORS = /too many errors/i;

/**
 * Whether a refusal is about the client's address or reputation rather than a mailbox: a 5.7.x
 * code, or a text the reply table (reply-patterns.ts) reads as policy ("too many
 * connections from your address", a blocklist, reverse DNS). The egress that got it rests for
 * that host; the batch engine also counts these, and only these, towards "the host refuses the
 * prober" at RCPT (a bare 550 without such a text is not one).
 */
export function refusesTheClient(reply: SmtpReply): boolean {
  if (reply.code < 400 || SESSION_ERRORS.test(reply.message)) return false;
  const code = reply.enhancedCode;
  // A 4.7.x alone is not enough: greylisting often says "451 4.7.1 try again later".
  if (code !== null && code.startsWith('5.7.')) return true;
  return findReplyPattern(patternText(reply.message), code)?.means === 'policy';
}

/**
 * The reputation guard as the engine's two paths (the batch scheduler and the single prober) see
 * it: whether an egress may open new sessions, and every reply a mail host gave it. The guard
 * itself (egress-guard.ts) rests listed and degraded egresses; docs/prober.md, "The reputation
 * guard".
 */
export interface EgressGate {
  /** False while the egress rests (listed on a blocklist, or degraded). Synchronous and cheap. */
  usable(egressId: string): boolean;
  /** `host` (an MX host name) replied `reply` at `stage` to `egress`; the guard counts blocks. */
  observe(egress: Egress, host: string, stage: SessionStage, reply: SmtpReply): void;
}

/**
 * The one decision "which of these egresses may open a new session now", which both paths take:
 * those the gate does not rest; when it rests every one of them, all of them (the prober carries
 * on rather than answer every address `unknown`; the guard logs it as an error: docs/prober.md,
 * "When every egress rests"). The same array when nothing rests, so the common case allocates
 * nothing.
 */
export function usableEgresses<T>(
  gate: EgressGate | null | undefined,
  items: readonly T[],
  egressOf: (item: T) => Egress,
): readonly T[] {
  if (gate === null || gate === undefined) return items;
  if (items.every((item) => gate.usable(egressOf(item).id))) return items;
  const usable = items.filter((item) => gate.usable(egressOf(item).id));
  return usable.length > 0 ? usable : items;
}

// About the session's security or authentication, not the client's reputation.
const NOT_REPUTATION = /starttls|\btls\b|encrypt|authenticat/i;

/**
 * Whether a reply is a block of the egress (what the guard counts towards "degraded"): a
 * permanent refusal of the greeting (banner, EHLO), or a permanent refusal at any later stage that
 * `refusesTheClient` reads as about our address (5.7.x, a text naming a blocklist, reverse DNS or
 * the client address), except a demand for TLS or authentication. Temporary refusals (421 "too
 * many connections", greylisting) are throttles, not blocks.
 */
export function blocksTheEgress(stage: SessionStage, reply: SmtpReply): boolean {
  if (reply.code < 500) return false;
  if (stage === 'banner' || stage === 'ehlo') return true;
  return refusesTheClient(reply) && !NOT_REPUTATION.test(reply.message);
}
