/**
 * `npm run bench:latency:postfix`: a first contact with a real Postfix (Debian's package) at a
 * real round trip, step by step: the engine (`createVerifier`, as `mailverdict verify` uses it)
 * asks root@lab.test, with warm sessions off so that every verification opens a session, DNS warm
 * (the in-process DNS server answers after one round trip; the engine caches the answer). The
 * warm-up verification also shows the engine that Postfix holds its reply behind its TLS session
 * tickets (src/engine/smtp/held-replies.ts): the samples wait for the first ticket.
 *
 * The lab: bench/postfix-lab/lab.sh puts Postfix in a network namespace of its own at
 * 198.18.0.2:25 and delays every packet --one-way-ms each way with NFQUEUE (this kernel has no
 * netem; a TCP proxy would hide what TCP does: ACKs, Nagle, delayed ACKs). Root only; the bench
 * starts and stops the lab itself. Nothing but the lab's own addresses is reached: the bench
 * refuses to run unless 198.18.0.2 is routed to the lab's veth.
 *
 * It prints, for STARTTLS and clear text, the p50 of each step from the transcript's times and of
 * the whole verification, in ms and in round trips, and one transcript.
 *
 *   --samples 20        verifications per case
 *   --one-way-ms 20     one-way delay (a 40 ms round trip)
 *   --quickack          the route to the lab with `quickack 1` (docs/prober.md): no delayed ACKs
 */
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { createVerifier } from '../src/engine/index.js';
import type { TranscriptLine } from '../src/engine/types.js';
import { startDnsServer } from '../test/kit/dns-server.js';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '20' },
    'one-way-ms': { type: 'string', default: '20' },
    quickack: { type: 'boolean', default: false },
  },
});
const SAMPLES = Math.min(100, Number(values.samples));
const ONE_WAY = Number(values['one-way-ms']);
const RTT = 2 * ONE_WAY;
const LAB = new URL('./postfix-lab/lab.sh', import.meta.url).pathname;
const MX_ADDRESS = '198.18.0.2';

/** The steps of a first contact, each from one transcript line to a later one. */
const STEPS: {
  name: string;
  from: (t: Times) => number | undefined;
  to: (t: Times) => number | undefined;
}[] = [
  { name: 'connect and banner', from: () => 0, to: (t) => t.banner },
  { name: 'EHLO', from: (t) => t.ehlo[0], to: (t) => t.ehloReply[0] },
  { name: 'STARTTLS', from: (t) => t.starttls, to: (t) => t.starttlsReply },
  { name: 'TLS handshake', from: (t) => t.starttlsReply, to: (t) => t.handshake },
  // At a host that holds its reply behind its session tickets (src/engine/smtp/held-replies.ts).
  { name: 'wait for the ticket', from: (t) => t.handshake, to: (t) => t.ehlo[1] },
  { name: 'EHLO after TLS', from: (t) => t.ehlo[1], to: (t) => t.ehloReply[1] },
  { name: 'MAIL and RCPTs', from: (t) => t.mail, to: (t) => t.lastReply },
  // What the engine does after the last reply until the verification returns.
  { name: 'until the result', from: (t) => t.lastReply, to: (t) => t.result },
];

interface Times {
  banner?: number;
  ehlo: number[];
  ehloReply: number[];
  starttls?: number;
  starttlsReply?: number;
  handshake?: number;
  mail?: number;
  lastReply?: number;
  result?: number;
}

function timesOf(lines: TranscriptLine[]): Times {
  const t: Times = { ehlo: [], ehloReply: [] };
  let last: string | null = null;
  for (const line of lines) {
    if (line.dir === 'out') {
      if (line.text.startsWith('EHLO')) t.ehlo.push(line.at_ms);
      else if (line.text === 'STARTTLS') t.starttls = line.at_ms;
      else if (line.text.startsWith('[TLS handshake')) t.handshake = line.at_ms;
      else if (line.text.startsWith('MAIL FROM')) t.mail ??= line.at_ms;
      last = line.text;
      continue;
    }
    // A reply's last line ("250 " rather than "250-") ends it.
    if (!/^\d{3} /.test(line.text)) continue;
    if (t.banner === undefined) t.banner = line.at_ms;
    else if (last?.startsWith('EHLO') && t.ehloReply.length < t.ehlo.length) t.ehloReply.push(line.at_ms);
    else if (last === 'STARTTLS' && t.starttlsReply === undefined) t.starttlsReply = line.at_ms;
    else if (t.mail !== undefined) t.lastReply = line.at_ms;
  }
  return t;
}

const p50 = (values: number[]): number => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor((sorted.length - 1) / 2)]!;
};

async function run(): Promise<void> {
  const dns = await startDnsServer();
  dns.setDomain('lab.test', { mx: [{ exchange: 'mx.lab.test', priority: 10 }] });
  dns.setDomain('mx.lab.test', { a: [MX_ADDRESS] });
  dns.setDelay(RTT);
  console.log(
    `\nfirst contact with Debian's Postfix, ${RTT} ms round trip, DNS warm, ${SAMPLES} samples a case`,
  );
  for (const starttls of ['opportunistic', 'never'] as const) {
    const config = loadConfig(
      {
        dnsServer: dns.address,
        allowInternalTargets: 'true',
        helo: 'prober.lab.test',
        mailFrom: 'verify@lab.test',
        smtpSessionIdle: 'off',
        starttls,
      },
      {},
    );
    const verifier = createVerifier(config.engine);
    // The warm-up: DNS and the catch-all answer are known from here on.
    await verifier.verify('root@lab.test');
    const latencies: number[] = [];
    const steps = new Map<string, number[]>(STEPS.map((s) => [s.name, []]));
    let verdicts = new Map<string, number>();
    let example: TranscriptLine[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const result = await verifier.verify('root@lab.test', { transcript: true });
      const verdict = `${result.status}${result.reason ? `/${result.reason}` : ''}`;
      verdicts = verdicts.set(verdict, (verdicts.get(verdict) ?? 0) + 1);
      latencies.push(result.latency_ms);
      const t = timesOf(result.transcript ?? []);
      t.result = result.latency_ms;
      for (const s of STEPS) {
        const from = s.from(t);
        const to = s.to(t);
        if (from !== undefined && to !== undefined) steps.get(s.name)!.push(to - from);
      }
      if (i === Math.floor(SAMPLES / 2)) example = result.transcript ?? [];
    }
    await verifier.close();
    console.log(
      `\n${starttls === 'never' ? 'clear text' : 'STARTTLS'}: verdicts ${JSON.stringify(Object.fromEntries(verdicts))}`,
    );
    for (const [name, values] of steps) {
      if (values.length === 0) continue;
      const v = p50(values);
      console.log(`  ${name.padEnd(20)} p50 ${v.toFixed(0).padStart(4)} ms  ${(v / RTT).toFixed(1)} RTT`);
    }
    const total = p50(latencies);
    // On a shared machine the tail is the load's; the minimum is the path's and the protocol's.
    const sorted = [...latencies].sort((a, b) => a - b);
    const p90 = sorted[Math.ceil(0.9 * sorted.length) - 1]!;
    console.log(
      `  ${'whole verification'.padEnd(20)} p50 ${total.toFixed(0).padStart(4)} ms  ${(total / RTT).toFixed(1)} RTT` +
        `  (min ${sorted[0]!.toFixed(0)}, p90 ${p90.toFixed(0)} ms)`,
    );
    console.log('  one transcript:');
    for (const line of example)
      console.log(`    ${String(line.at_ms).padStart(4)} ms ${line.dir === 'out' ? '>' : '<'} ${line.text}`);
  }
  await dns.close();
}

execFileSync('bash', [LAB, 'up', String(ONE_WAY)], { stdio: 'inherit' });
try {
  const route = execFileSync('ip', ['route', 'get', MX_ADDRESS], { encoding: 'utf8' });
  if (!route.includes('dev mvlab0')) throw new Error(`${MX_ADDRESS} is not routed to the lab: ${route}`);
  // The prober host's own setting (docs/prober.md): acknowledge at once on the route to the lab.
  if (values.quickack)
    execFileSync('ip', [
      'route',
      'replace',
      '198.18.0.0/30',
      'dev',
      'mvlab0',
      'src',
      '198.18.0.1',
      'quickack',
      '1',
    ]);
  await run();
} finally {
  execFileSync('bash', [LAB, 'down'], { stdio: 'inherit' });
}
