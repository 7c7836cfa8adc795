/**
 * `npm run bench:engine`: full single-address probes (`createVerifier(...).verify`) per second
 * against a fake MTA in another process (bench/fake-mta.ts), first with zero latency, then with
 * a delay before every SMTP reply. DNS is the in-process test server: the MX lookup is cached
 * after the first probe, and so is the domain's catch-all answer, so the figures are those of
 * the per-address probe (connect, banner, EHLO, MAIL, RCPT, QUIT).
 *
 *   --duration-ms 10000   how long each run lasts
 *   --concurrency 50      probes in flight
 *   --latency-ms 20       delay of the second run
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EngineOptions } from '../src/engine/types.js';
import { createVerifier } from '../src/engine/verifier.js';
import { startDnsServer } from '../test/kit/dns-server.js';
import type { FakeDnsServer } from '../test/kit/dns-server.js';

const { values } = parseArgs({
  options: {
    'duration-ms': { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '50' },
    'latency-ms': { type: 'string', default: '20' },
  },
});
const DURATION_MS = Number(values['duration-ms']);
const CONCURRENCY = Number(values.concurrency);
const LATENCY_MS = Number(values['latency-ms']);
const DOMAIN = 'bench.test';
/** Every tenth address is unknown to the fake MTA (RCPT 550), the rest exist. */
const UNKNOWN_EVERY = 10;

interface MtaStats {
  sessions: number;
  replies: Record<string, number>;
}

interface FakeMta {
  port: number;
  stats(): Promise<MtaStats>;
  stop(): Promise<void>;
}

async function startFakeMta(latencyMs: number, pipelining: boolean): Promise<FakeMta> {
  const child: ChildProcess = fork(
    fileURLToPath(new URL('./fake-mta.ts', import.meta.url)),
    ['--host', '127.0.0.1', '--latency-ms', String(latencyMs), '--pipelining', pipelining ? 'on' : 'off'],
    { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const [ready] = (await once(child, 'message')) as [{ type: string; port: number }];
  return {
    port: ready.port,
    stats: async () => {
      child.send({ type: 'stats' });
      const [message] = (await once(child, 'message')) as [MtaStats];
      return message;
    },
    stop: async () => {
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    },
  };
}

function engineOptions(dns: FakeDnsServer, smtpPort: number): EngineOptions {
  return {
    dns: {
      servers: [dns.address],
      timeoutMs: 2000,
      tries: 2,
      positiveTtlMs: 3_600_000,
      negativeTtlMs: 60_000,
    },
    smtp: {
      port: smtpPort,
      heloName: 'bench.localhost',
      mailFrom: 'bench@bench.localhost',
      proxies: [],
      maxMxHosts: 3,
    },
    catchAllTtlMs: 3_600_000,
  };
}

interface Figures {
  latencyMs: number;
  pipelining: boolean;
  firstProbeMs: number;
  probes: number;
  seconds: number;
  probesPerSecond: number;
  p50: number;
  p99: number;
  mean: number;
  cpuMsPerProbe: number;
  statuses: Record<string, number>;
  repliesPerSession: Record<string, number>;
}

/**
 * The replies a probe waits for, one after the other, once the domain's MX and catch-all
 * answers are cached: banner, EHLO, then MAIL and RCPT (one round trip when the server offers
 * PIPELINING, two otherwise). QUIT is sent with a half-close and its 221 is not awaited; the
 * TCP handshake is not delayed by the fake MTA. The first probe of a domain adds the catch-all
 * RCPT (pipelined with the others, or one more round trip).
 */
function roundTrips(pipelining: boolean): number {
  return 2 + (pipelining ? 1 : 2);
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function run(dns: FakeDnsServer, latencyMs: number, pipelining: boolean): Promise<Figures> {
  const mta = await startFakeMta(latencyMs, pipelining);
  const verifier = createVerifier(engineOptions(dns, mta.port), {});
  try {
    // The first probe of the domain pays for the DNS lookups and the catch-all RCPT.
    const firstStarted = performance.now();
    await verifier.verify(`user-first@${DOMAIN}`);
    const firstProbeMs = performance.now() - firstStarted;
    // Warm-up: lets V8 compile the path.
    for (let i = 0; i < 20; i++) await verifier.verify(`user-warmup${i}@${DOMAIN}`);
    const before = await mta.stats();

    const latencies: number[] = [];
    const statuses: Record<string, number> = {};
    let counter = 0;
    const cpuStart = process.cpuUsage();
    const started = performance.now();
    const deadline = started + DURATION_MS;
    // Staggered starts: probes that all begin together stay in lock-step, and every reply then
    // arrives in a burst of CONCURRENCY that the last one in the burst waits behind.
    const worker = async (index: number): Promise<void> => {
      await sleep((index * Math.max(1, latencyMs * 3)) / CONCURRENCY);
      while (performance.now() < deadline) {
        const n = counter++;
        const address = n % UNKNOWN_EVERY === 0 ? `nobody${n}@${DOMAIN}` : `user${n}@${DOMAIN}`;
        const t0 = performance.now();
        const result = await verifier.verify(address, { timeoutMs: 5000 });
        latencies.push(performance.now() - t0);
        const key = result.reason === null ? result.status : `${result.status}/${result.reason}`;
        statuses[key] = (statuses[key] ?? 0) + 1;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => worker(i)));
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuStart);
    const after = await mta.stats();

    latencies.sort((a, b) => a - b);
    const probes = latencies.length;
    const sessions = after.sessions - before.sessions;
    const repliesPerSession: Record<string, number> = {};
    for (const [kind, total] of Object.entries(after.replies)) {
      const delta = total - (before.replies[kind] ?? 0);
      if (delta > 0) repliesPerSession[kind] = delta / sessions;
    }
    return {
      latencyMs,
      pipelining,
      firstProbeMs,
      probes,
      seconds,
      probesPerSecond: probes / seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      mean: latencies.reduce((a, b) => a + b, 0) / probes,
      cpuMsPerProbe: (cpu.user + cpu.system) / 1000 / probes,
      statuses,
      repliesPerSession,
    };
  } finally {
    await verifier.close();
    await mta.stop();
  }
}

function summary(f: Figures): string {
  const replies = Object.entries(f.repliesPerSession)
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ');
  return [
    `${f.latencyMs} ms per reply, PIPELINING ${f.pipelining ? 'offered' : 'not offered'}: ` +
      `${f.probes} probes in ${f.seconds.toFixed(1)} s`,
    `  ${f.probesPerSecond.toFixed(0)} probes/s, p50 ${f.p50.toFixed(1)} ms, p99 ${f.p99.toFixed(1)} ms, mean ${f.mean.toFixed(1)} ms`,
    `  engine CPU ${(f.cpuMsPerProbe * 1000).toFixed(0)} µs per probe (bench process, user+system)`,
    `  verdicts: ${JSON.stringify(f.statuses)}`,
    `  first probe of the domain (DNS lookups, catch-all RCPT, cold code): ${f.firstProbeMs.toFixed(1)} ms`,
    `  replies per SMTP session: ${replies}`,
  ].join('\n');
}

const dns = await startDnsServer({
  [DOMAIN]: { mx: [{ exchange: `mx.${DOMAIN}`, priority: 10 }] },
  [`mx.${DOMAIN}`]: { a: ['127.0.0.1'] },
});
try {
  console.log(
    `engine benchmark: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ` +
      `${CONCURRENCY} probes in flight, ${DURATION_MS / 1000} s per run, ` +
      `load average before ${os.loadavg()[0]!.toFixed(1)} (other work on the machine skews every figure)`,
  );
  const zero = await run(dns, 0, true);
  console.log(summary(zero));
  const checks = [`>= 1000 probes/s at zero latency: ${zero.probesPerSecond >= 1000 ? 'met' : 'MISSED'}`];
  for (const pipelining of [true, false]) {
    const slow = await run(dns, LATENCY_MS, pipelining);
    console.log(summary(slow));
    const trips = roundTrips(pipelining);
    const expected = trips * LATENCY_MS;
    const off = (slow.p50 - expected) / expected;
    console.log(
      `  round trips: ${trips} (banner, EHLO, ${pipelining ? 'MAIL+RCPT pipelined' : 'MAIL, RCPT'}) × ${LATENCY_MS} ms = ` +
        `${expected} ms; measured p50 ${slow.p50.toFixed(1)} ms (${(off * 100).toFixed(1)}%)`,
    );
    checks.push(
      `p50 within 10% of round trips × latency (${pipelining ? 'pipelining' : 'no pipelining'}): ${Math.abs(off) <= 0.1 ? 'met' : 'MISSED'}`,
    );
  }
  console.log(`targets: ${checks.join('; ')}`);
  console.log(`load average after: ${os.loadavg()[0]!.toFixed(1)}`);
} finally {
  await dns.close();
}
