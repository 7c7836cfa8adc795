/**
 * `npm run bench:latency`: how long a single verification takes through the real API
 * (`POST /v1/verify` with a live key on a listening server, the runtime built in this process)
 * against a mail server `--one-way-ms` away (default 20 ms each way, a 40 ms round trip):
 * test/kit/latency-mta.ts delays every reply by a round trip, the banner and STARTTLS by two
 * (TCP's and TLS's handshakes); the in-process DNS server delays every answer by a round trip.
 *
 * Three cases, each without and with STARTTLS:
 *   warm           the mail host was asked a moment ago (DNS, catch-all known; a session may be open)
 *   first contact  DNS known, no session open (the server closed the one of the warm-up)
 *   cold           nothing known: a new domain with a new MX host
 *   dual stack     cold, and the MX host also has an AAAA record (::1) whose connect never
 *                  completes (test/kit/blackhole.ts): Happy Eyeballs tries IPv6 first and
 *                  connects over IPv4 after its 250 ms Connection Attempt Delay (no TLS only)
 *   slow AAAA      dual stack, and the AAAA answer comes 4 round trips after the A answer: the
 *                  race starts over IPv4 after the 50 ms Resolution Delay (RFC 8305 §3)
 *                  instead of waiting for it (no TLS only)
 *
 * It prints p50 and p99 of `latency_ms` in ms and in round trips, and the verdicts it got (every
 * address is deliverable at the kit's server: anything else is a wrong answer, counted).
 *
 *   --samples 30        verifications per case
 *   --one-way-ms 20     one-way delay
 *   --max-seconds 240   stop measuring after this long
 *   --set k=v           a setting for the server (repeatable), e.g. --set starttls=never
 *   --only-default      skip the first pass (warm sessions off, as before warm sessions existed)
 *
 * By default it runs every case twice, each time through a fresh runtime: with warm sessions off
 * (`--smtp-session-idle off`: a QUIT after each verification, the behaviour before them), then
 * with the defaults, and prints the ratios of the p50s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { createRuntime, startServer } from '../src/runtime.js';
import { createAccount } from '../src/services/accounts/accounts.service.js';
import { createKey } from '../src/services/keys/keys.service.js';
import { startBlackhole } from '../test/kit/blackhole.js';
import { startDnsServer } from '../test/kit/dns-server.js';
import { startLatencyMta } from '../test/kit/latency-mta.js';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '30' },
    'one-way-ms': { type: 'string', default: '20' },
    'max-seconds': { type: 'string', default: '240' },
    set: { type: 'string', multiple: true, default: [] },
    'only-default': { type: 'boolean', default: false },
  },
});
const SAMPLES = Math.min(200, Number(values.samples));
const ONE_WAY = Number(values['one-way-ms']);
const RTT = 2 * ONE_WAY;
const MAX_MS = Number(values['max-seconds']) * 1000;
/** The server closes idle sessions of the first-contact hosts after this (their warm-up's). */
const FIRST_CONTACT_IDLE_MS = 1_000;

type CaseName = 'warm' | 'first contact' | 'cold' | 'dual stack' | 'slow AAAA';
interface Case {
  name: CaseName;
  tls: boolean;
  /** Third octet of the case's hosts (127.0.<octet>.<n>). */
  octet: number;
}
const CASES: Case[] = [
  { name: 'warm', tls: false, octet: 2 },
  { name: 'warm', tls: true, octet: 3 },
  { name: 'first contact', tls: false, octet: 4 },
  { name: 'first contact', tls: true, octet: 5 },
  { name: 'cold', tls: false, octet: 6 },
  { name: 'cold', tls: true, octet: 7 },
  { name: 'dual stack', tls: false, octet: 8 },
  { name: 'slow AAAA', tls: false, octet: 9 },
];
const hostsOf = (c: Case): string[] =>
  c.name === 'warm'
    ? [`127.0.${c.octet}.1`]
    : Array.from({ length: SAMPLES }, (_, i) => `127.0.${c.octet}.${i + 1}`);
const TLS_OCTETS = new Set(CASES.filter((c) => c.tls).map((c) => c.octet));
const octetOf = (host: string): number => Number(host.split('.')[2]);

const dns = await startDnsServer();
const mta = await startLatencyMta({
  hosts: CASES.flatMap(hostsOf),
  oneWayMs: ONE_WAY,
  starttls: (host) => TLS_OCTETS.has(octetOf(host)),
  idleTimeoutMs: (host) => (octetOf(host) === 4 || octetOf(host) === 5 ? FIRST_CONTACT_IDLE_MS : Infinity),
  // The addresses asked exist; any other (the catch-all probe's random one) does not.
  rcpt: (address) =>
    /^(user\d*|warmup)@/.test(address)
      ? '250 2.1.5 OK'
      : '550 5.1.1 <' + address + '>: Recipient address rejected: User unknown',
});
// The dual-stack case's IPv6 address: a connect to it never completes.
const silentIpv6 = await startBlackhole(['::1'], mta.port);
// A DNS answer takes a round trip too (the resolver is as far as the mail host: an upper bound).
dns.setDelay(RTT);
const domainOf = (c: Case, i: number): string =>
  `${c.name === 'warm' ? 'w' : `d${i}`}.${c.name.replace(' ', '-').toLowerCase()}-${c.tls ? 'tls' : 'plain'}.test`;
for (const c of CASES) {
  hostsOf(c).forEach((host, i) => {
    const domain = domainOf(c, i);
    dns.setDomain(domain, { mx: [{ exchange: `mx.${domain}`, priority: 10 }] });
    const dual = c.name === 'dual stack' || c.name === 'slow AAAA';
    dns.setDomain(`mx.${domain}`, dual ? { a: [host], aaaa: ['::1'] } : { a: [host] });
    if (c.name === 'slow AAAA') dns.setTypeDelay('AAAA', 5 * RTT, `mx.${domain}`);
  });
}

const extra = Object.fromEntries(
  (values.set ?? []).map((kv) => {
    const at = kv.indexOf('=');
    return [kv.slice(0, at), kv.slice(at + 1)];
  }),
);

interface Answer {
  latency: number;
  verdict: string;
}

const startedAt = performance.now();
const timeLeft = (): boolean => performance.now() - startedAt < MAX_MS;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
const caseName = (c: Case): string => `${c.name}, ${c.tls ? 'STARTTLS' : 'no TLS'}`;
const rt = (v: number): string => (v / RTT).toFixed(1);
let wrong = 0;

/** Every case through a fresh runtime with `flags`; the p50 of each case. */
async function pass(label: string, flags: Record<string, string>): Promise<Map<string, number>> {
  const dir = mkdtempSync(join(os.tmpdir(), 'mailverdict-latency-'));
  const config = loadConfig(
    {
      dataDir: dir,
      host: '127.0.0.1',
      port: '0',
      dnsServer: dns.address,
      smtpPort: String(mta.port),
      allowInternalTargets: 'true',
      helo: 'probe.mailverdict.test',
      ...extra,
      ...flags,
    },
    {},
  );
  const runtime = await createRuntime(config, { clock: systemClock, logger: pino({ level: 'silent' }) });
  const server = await startServer(runtime);
  const account = await createAccount(runtime.ctx.db, systemClock, {
    email: 'bench@example.org',
    rateLimit: 10_000,
  });
  const { key } = await createKey(runtime.ctx.db, systemClock, { accountId: account.id, kind: 'live' });

  async function verify(email: string): Promise<Answer> {
    const res = await fetch(`${server.url}/v1/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email, timeout_ms: 5000 }),
    });
    const body = (await res.json()) as {
      latency_ms?: number;
      status?: string;
      reason?: string | null;
      error?: string;
    };
    if (res.status !== 200) return { latency: NaN, verdict: `HTTP ${res.status} ${body.error ?? ''}` };
    return { latency: body.latency_ms!, verdict: `${body.status}${body.reason ? `/${body.reason}` : ''}` };
  }

  async function measure(c: Case): Promise<Answer[]> {
    const answers: Answer[] = [];
    const domain = (i: number): string => domainOf(c, i);
    if (c.name === 'warm') {
      // The warm-up asks the domain once: DNS, catch-all and (where kept) a session are known.
      await verify(`warmup@${domain(0)}`);
      for (let i = 0; i < SAMPLES && timeLeft(); i++) answers.push(await verify(`user${i}@${domain(0)}`));
    } else if (c.name === 'first contact') {
      // DNS (and catch-all) warmed by one verification per domain; the server then closes its session.
      await Promise.all(hostsOf(c).map((_, i) => verify(`warmup@${domain(i)}`)));
      await sleep(FIRST_CONTACT_IDLE_MS + 4 * RTT + 100);
      for (let i = 0; i < SAMPLES && timeLeft(); i++) answers.push(await verify(`user@${domain(i)}`));
    } else {
      for (let i = 0; i < SAMPLES && timeLeft(); i++) answers.push(await verify(`user@${domain(i)}`));
    }
    return answers;
  }

  console.log(
    `\n${label} (${
      Object.entries(flags)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ') || 'default settings'
    })`,
  );
  const p50s = new Map<string, number>();
  for (const c of CASES) {
    if (!timeLeft()) break;
    const answers = await measure(c);
    const ms = answers
      .map((a) => a.latency)
      .filter(Number.isFinite)
      .sort((a, b) => a - b);
    const verdicts = new Map<string, number>();
    for (const a of answers) verdicts.set(a.verdict, (verdicts.get(a.verdict) ?? 0) + 1);
    wrong += answers.filter((a) => a.verdict !== 'deliverable').length;
    const p50 = percentile(ms, 50);
    const p99 = percentile(ms, 99);
    p50s.set(caseName(c), p50);
    console.log(
      `  ${caseName(c).padEnd(26)} n=${String(answers.length).padStart(3)}  ` +
        `p50 ${String(p50).padStart(4)} ms (${rt(p50)} RTT)  p99 ${String(p99).padStart(4)} ms (${rt(p99)} RTT)  ` +
        `verdicts: ${[...verdicts].map(([v, n]) => `${v} ×${n}`).join(', ')}`,
    );
  }
  await server.close();
  await runtime.close();
  rmSync(dir, { recursive: true, force: true });
  return p50s;
}

// Without warm sessions first (as before this work), then the defaults: one run, one machine load.
const before = values['only-default'] ? null : await pass('warm sessions off', { smtpSessionIdle: 'off' });
const after = await pass('defaults', {});
if (before !== null) {
  console.log('\np50, defaults / sessions off:');
  for (const [name, p50] of after)
    console.log(`  ${name.padEnd(26)} ${(p50 / before.get(name)!).toFixed(2)}`);
}
console.log(
  `\nround trip ${RTT} ms (one way ${ONE_WAY} ms); connections the server saw: ${mta.core.tally().connections}; ` +
    `answers other than deliverable: ${wrong}; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
);

silentIpv6.close();
await mta.close();
await dns.close();
process.exitCode = wrong === 0 ? 0 : 1;
