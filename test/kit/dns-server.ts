/**
 * An in-process authoritative DNS server for tests and benchmarks: UDP and TCP on one ephemeral
 * loopback port, answering MX, A, AAAA, NS, PTR and TXT from a zone the test edits while the server runs.
 * Point the engine at it with `servers: [server.address]`.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { once } from 'node:events';
import dnsPacket from 'dns-packet';
import type { Answer, Packet, Question } from 'dns-packet';

export interface MxEntry {
  exchange: string;
  priority: number;
}

export interface DomainRecords {
  mx?: MxEntry[];
  a?: string[];
  aaaa?: string[];
  /** Names of a reverse-DNS name (`4.3.2.1.in-addr.arpa`). */
  ptr?: string[];
  /** TXT records, one string each (SPF policies, DNSBL reasons). */
  txt?: string[];
  /** Name servers (`.` is the root: the resolver-trust probes ask its NS). */
  ns?: string[];
}

export interface DnsQueryLogEntry {
  name: string;
  type: string;
  transport: 'udp' | 'tcp';
}

type ZoneEntry =
  | { kind: 'records'; records: DomainRecords }
  | { kind: 'nxdomain' }
  | { kind: 'servfail' }
  | { kind: 'silent' }
  | { kind: 'null_mx' };

export interface FakeDnsServer {
  /** "127.0.0.1:PORT", the form `Resolver.setServers` takes. */
  readonly address: string;
  readonly port: number;
  /** Every question received, in order. */
  readonly queries: DnsQueryLogEntry[];
  /** How many questions for `name` (and `type`, when given) were received. */
  queryCount(name: string, type?: string): number;
  setDomain(name: string, records: DomainRecords): void;
  setNxdomain(name: string): void;
  setServfail(name: string): void;
  /** Questions for this name are never answered: the client times out. */
  setSilent(name: string): void;
  /** RFC 7505: a single `MX 0 .`. */
  setNullMx(name: string): void;
  /** Forgets a name: it answers NXDOMAIN again. */
  remove(name: string): void;
  /** Delays every answer by `ms` (latency for benchmarks). */
  setDelay(ms: number): void;
  /**
   * Delays the answers to questions of `type` (`A`, `AAAA`...) by `ms` instead, for every name or
   * only for `name` (0: back to `setDelay`'s).
   */
  setTypeDelay(type: string, ms: number, name?: string): void;
  close(): Promise<void>;
}

export interface DnsServerOptions {
  /** TTL put on every record. 0 keeps any resolver-side cache out of the way of tests. */
  ttl?: number;
}

/**
 * The name a kit's service is told must exist (`--dns-trust-name`), so that its resolver-trust
 * monitor (engine/dns/resolver-trust.ts) judges the in-process server truthful: loopback has no
 * real root or providers to ask. `withTrustAnchor` puts it in a server's zone.
 */
export const TRUST_ANCHOR = 'resolver-anchor.mailverdict.test';

/** The settings (flags, by setting key) that point a service's trust probes at `TRUST_ANCHOR`. */
export const TRUST_ANCHOR_FLAGS = { dnsTrustName: TRUST_ANCHOR, dnsTrustAbsentZone: 'test' } as const;

/** The same as `MAILVERDICT_*` variables, for services run as child processes. */
export const TRUST_ANCHOR_ENV = {
  MAILVERDICT_DNS_TRUST_NAMES: TRUST_ANCHOR,
  MAILVERDICT_DNS_TRUST_ABSENT_ZONE: 'test',
} as const;

/** Puts `TRUST_ANCHOR` (an MX record) in the server's zone; returns the server. */
export function withTrustAnchor(server: FakeDnsServer): FakeDnsServer {
  server.setDomain(TRUST_ANCHOR, { mx: [{ exchange: `mx.${TRUST_ANCHOR}`, priority: 10 }] });
  return server;
}

const CLASSIC_UDP_LIMIT = 512;
const RCODE_SERVFAIL = 2;
const RCODE_NXDOMAIN = 3;

function normalise(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** Starts a server on 127.0.0.1 with an ephemeral port shared by UDP and TCP. */
export async function startDnsServer(
  zone: Record<string, DomainRecords> = {},
  options: DnsServerOptions = {},
): Promise<FakeDnsServer> {
  const ttl = options.ttl ?? 0;
  const entries = new Map<string, ZoneEntry>();
  const queries: DnsQueryLogEntry[] = [];
  let delayMs = 0;
  const typeDelayMs = new Map<string, number>();
  const delayFor = (query: Packet): number => {
    const question = query.questions?.[0];
    if (question === undefined) return delayMs;
    return (
      typeDelayMs.get(`${normalise(question.name)}|${question.type}`) ??
      typeDelayMs.get(question.type) ??
      delayMs
    );
  };
  const pendingTimers = new Set<NodeJS.Timeout>();
  const sockets = new Set<net.Socket>();

  for (const [name, records] of Object.entries(zone))
    entries.set(normalise(name), { kind: 'records', records });

  const answer = (query: Packet, transport: 'udp' | 'tcp', maxSize: number): Buffer | null => {
    const questions = query.questions ?? [];
    const answers: Answer[] = [];
    let rcode = 0;
    for (const q of questions) {
      queries.push({ name: normalise(q.name), type: q.type, transport });
      const entry = entries.get(normalise(q.name));
      if (entry === undefined || entry.kind === 'nxdomain') {
        rcode = RCODE_NXDOMAIN;
        continue;
      }
      if (entry.kind === 'silent') return null;
      if (entry.kind === 'servfail') {
        rcode = RCODE_SERVFAIL;
        continue;
      }
      answers.push(...recordsFor(q, entry, ttl));
    }
    const response: Packet = {
      type: 'response',
      id: query.id ?? 0,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) | rcode,
      questions,
      answers,
    };
    const encoded = dnsPacket.encode(response);
    if (transport === 'udp' && encoded.length > maxSize) {
      // Too big for the datagram: the client must ask again over TCP (RFC 7766).
      return dnsPacket.encode({
        ...response,
        answers: [],
        flags: (response.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE,
      });
    }
    return encoded;
  };

  const later = (ms: number, fn: () => void): void => {
    if (ms <= 0) return fn();
    const timer = setTimeout(() => {
      pendingTimers.delete(timer);
      fn();
    }, ms);
    pendingTimers.add(timer);
  };

  const createUdp = (): dgram.Socket => {
    const socket = dgram.createSocket('udp4');
    socket.on('message', (msg, rinfo) => {
      let query: Packet;
      try {
        query = dnsPacket.decode(msg);
      } catch {
        return;
      }
      const response = answer(query, 'udp', udpLimit(query));
      if (response === null) return;
      later(delayFor(query), () => socket.send(response, rinfo.port, rinfo.address));
    });
    return socket;
  };

  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      // RFC 1035 §4.2.2: every message over TCP is prefixed with its two-byte length.
      while (buffered.length >= 2) {
        const length = buffered.readUInt16BE(0);
        if (buffered.length < 2 + length) break;
        const message = buffered.subarray(2, 2 + length);
        buffered = buffered.subarray(2 + length);
        let query: Packet;
        try {
          query = dnsPacket.decode(message);
        } catch {
          socket.destroy();
          return;
        }
        const response = answer(query, 'tcp', Infinity);
        if (response === null) continue;
        const framed = Buffer.alloc(2 + response.length);
        framed.writeUInt16BE(response.length, 0);
        response.copy(framed, 2);
        later(delayFor(query), () => {
          if (!socket.destroyed) socket.write(framed);
        });
      }
    });
  });

  const { udp, port } = await bindBoth(createUdp, tcp);

  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    queryCount: (name, type) =>
      queries.filter((q) => q.name === normalise(name) && (type === undefined || q.type === type)).length,
    setDomain: (name, records) => entries.set(normalise(name), { kind: 'records', records }),
    setNxdomain: (name) => entries.set(normalise(name), { kind: 'nxdomain' }),
    setServfail: (name) => entries.set(normalise(name), { kind: 'servfail' }),
    setSilent: (name) => entries.set(normalise(name), { kind: 'silent' }),
    setNullMx: (name) => entries.set(normalise(name), { kind: 'null_mx' }),
    remove: (name) => entries.delete(normalise(name)),
    setDelay: (ms) => {
      delayMs = ms;
    },
    setTypeDelay: (type, ms, name) => {
      const key = name === undefined ? type : `${normalise(name)}|${type}`;
      if (ms > 0) typeDelayMs.set(key, ms);
      else typeDelayMs.delete(key);
    },
    close: async () => {
      for (const timer of pendingTimers) clearTimeout(timer);
      pendingTimers.clear();
      for (const socket of sockets) socket.destroy();
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ]);
    },
  };
}

function recordsFor(q: Question, entry: ZoneEntry, ttl: number): Answer[] {
  const name = q.name;
  if (entry.kind === 'null_mx') {
    return q.type === 'MX' ? [{ type: 'MX', name, ttl, data: { preference: 0, exchange: '.' } }] : [];
  }
  if (entry.kind !== 'records') return [];
  const { records } = entry;
  if (q.type === 'MX') {
    return (records.mx ?? []).map((mx) => ({
      type: 'MX' as const,
      name,
      ttl,
      data: { preference: mx.priority, exchange: mx.exchange },
    }));
  }
  if (q.type === 'A') return (records.a ?? []).map((data) => ({ type: 'A' as const, name, ttl, data }));
  if (q.type === 'AAAA')
    return (records.aaaa ?? []).map((data) => ({ type: 'AAAA' as const, name, ttl, data }));
  if (q.type === 'NS') return (records.ns ?? []).map((data) => ({ type: 'NS' as const, name, ttl, data }));
  if (q.type === 'PTR') return (records.ptr ?? []).map((data) => ({ type: 'PTR' as const, name, ttl, data }));
  if (q.type === 'TXT')
    return (records.txt ?? []).map((text) => ({ type: 'TXT' as const, name, ttl, data: txtStrings(text) }));
  return [];
}

/** A TXT record's text as character-strings of at most 255 octets (RFC 1035 §3.3.14). */
function txtStrings(text: string): string[] {
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += 255) parts.push(text.slice(i, i + 255));
  return parts.length > 0 ? parts : [''];
}

/** The UDP payload size the client advertised with EDNS(0), or the classic 512 bytes. */
function udpLimit(query: Packet): number {
  const opt = (query.additionals ?? []).find((a) => a.type === 'OPT');
  const size = opt && 'udpPayloadSize' in opt ? Number(opt.udpPayloadSize) : 0;
  return Math.max(CLASSIC_UDP_LIMIT, size);
}

/** Binds UDP on an ephemeral port, then TCP on the same number; retries when TCP's is taken. */
async function bindBoth(
  createUdp: () => dgram.Socket,
  tcp: net.Server,
): Promise<{ udp: dgram.Socket; port: number }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const udp = createUdp();
    udp.bind(0, '127.0.0.1');
    await once(udp, 'listening');
    const { port } = udp.address();
    try {
      tcp.listen(port, '127.0.0.1');
      await once(tcp, 'listening');
      return { udp, port };
    } catch {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
    }
  }
  throw new Error('could not bind UDP and TCP on one port');
}
