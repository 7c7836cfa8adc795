/**
 * `npm run bench:isolation`: does one batch submission stall everyone else? (issue 7, defect 1)
 *
 * A real `serve` process (loopback, no embedded workers) is probed by concurrent
 * `GET /healthz` and `POST /v1/verify` (test key) loops, alone first, then while:
 *   - adversarial bodies of 150 MiB are submitted back to back (deeply nested arrays; a valid
 *     start followed by a huge extra field; one endless "address"),
 *   - a valid batch of 500,000 addresses of 254 characters (about 128 MB) is submitted.
 * It prints p50/p99 of the probes per phase, the valid submission's duration and the server's
 * peak RSS (VmHWM). Targets: p99 < 50 ms while under attack or while the big batch is read;
 * the big submission under 3 s and 300 MB peak RSS.
 *
 * `--server-root DIR` runs the server of another checkout (its dist/), to measure a before/after
 * ratio in the same run conditions.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, Agent } from 'node:http';
import { connect } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { spawnServe } from '../test/kit/cli.js';

const { values: args } = parseArgs({
  options: {
    'server-root': { type: 'string', default: process.cwd() },
    'probe-seconds': { type: 'string', default: '4' },
    skip: { type: 'string', default: '' },
  },
});
const ROOT = resolve(args['server-root']);
const PROBE_MS = Number(args['probe-seconds']) * 1000;
const MIB = 1024 * 1024;
const ADVERSARIAL_BYTES = 150 * MIB;

interface Server {
  child: ChildProcess;
  url: URL;
  testKey: string;
  dir: string;
}

async function startServer(): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'mailverdict-isolation-'));
  const serve = await spawnServe(['--port', '0', '--data-dir', dir], {
    built: true,
    root: ROOT,
    env: {
      ...process.env,
      MAILVERDICT_EMBEDDED_WORKERS: 'false',
      MAILVERDICT_LOG_LEVEL: 'warn',
      MAILVERDICT_AUTH_FAILURE_RATE_LIMIT: '0',
      MAILVERDICT_PLANS: JSON.stringify({
        free: { rate_limit_per_second: 1_000_000, monthly_quota: 10_000_000 },
      }),
    },
    stderr: 'inherit',
  });
  // Today's serve writes the keys to a file when stdout is a pipe; older ones printed them.
  const testKey = serve.keys?.test_key ?? (serve.first.test_key as string);
  return { child: serve.child, url: new URL(serve.url), testKey, dir };
}

async function stopServer(s: Server): Promise<void> {
  s.child.kill('SIGTERM');
  await new Promise((r) => s.child.once('exit', r));
  rmSync(s.dir, { recursive: true, force: true });
}

function peakRssMb(s: Server): number {
  const status = readFileSync(`/proc/${s.child.pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

function timedRequest(s: Server, method: string, path: string, body?: string): Promise<number> {
  const started = performance.now();
  return new Promise((res, rej) => {
    const req = httpRequest(
      {
        agent,
        host: s.url.hostname,
        port: s.url.port,
        method,
        path,
        headers: body
          ? {
              authorization: `Bearer ${s.testKey}`,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            }
          : {},
      },
      (response) => {
        response.resume();
        response.on('end', () => {
          if (response.statusCode !== 200) rej(new Error(`${path} answered ${response.statusCode}`));
          else res(performance.now() - started);
        });
      },
    );
    req.on('error', rej);
    req.end(body);
  });
}

interface ProbeStats {
  healthz: number[];
  verify: number[];
}

/** Two /healthz and two /v1/verify loops until `until()` says stop (bounded by PROBE_MS × 10). */
async function probe(s: Server, until: () => boolean): Promise<ProbeStats> {
  const stats: ProbeStats = { healthz: [], verify: [] };
  const deadline = Date.now() + PROBE_MS * 10;
  const verifyBody = JSON.stringify({ email: 'anna@valid.example.com' });
  const loop = async (kind: keyof ProbeStats): Promise<void> => {
    while (!until() && Date.now() < deadline) {
      stats[kind].push(
        kind === 'healthz'
          ? await timedRequest(s, 'GET', '/healthz')
          : await timedRequest(s, 'POST', '/v1/verify', verifyBody),
      );
    }
  };
  await Promise.all([loop('healthz'), loop('healthz'), loop('verify'), loop('verify')]);
  return stats;
}

function pct(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function report(phase: string, stats: ProbeStats): void {
  const f = (v: number) => v.toFixed(1).padStart(7);
  console.log(
    `${phase.padEnd(34)} healthz n=${String(stats.healthz.length).padStart(5)} p50 ${f(pct(stats.healthz, 50))} ms p99 ${f(pct(stats.healthz, 99))} ms | ` +
      `verify n=${String(stats.verify.length).padStart(5)} p50 ${f(pct(stats.verify, 50))} ms p99 ${f(pct(stats.verify, 99))} ms`,
  );
}

/**
 * Sends one body of `total` bytes on a raw socket: `head`, then `filler` repeated. Resolves with
 * the status line the server answered (or 'closed') and how many bytes went out before it did.
 */
function sendBody(
  s: Server,
  head: Buffer,
  filler: Buffer,
  total: number,
): Promise<{ status: string; sent: number }> {
  return new Promise((res) => {
    const socket = connect(Number(s.url.port), s.url.hostname);
    let sent = 0;
    let answer = '';
    let done = false;
    const finish = (status: string) => {
      if (done) return;
      done = true;
      socket.destroy();
      res({ status, sent });
    };
    socket.on('data', (d) => {
      answer += d.toString('latin1');
      if (answer.includes('\r\n')) finish(answer.slice(9, 12));
    });
    socket.on('error', () => finish(answer === '' ? 'closed' : answer.slice(9, 12)));
    socket.on('close', () => finish(answer === '' ? 'closed' : answer.slice(9, 12)));
    const headers =
      `POST /v1/verify/batch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.testKey}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`;
    socket.write(headers);
    const pump = (): void => {
      while (!done && sent < total) {
        const piece = sent === 0 ? head : filler.subarray(0, Math.min(filler.length, total - sent));
        sent += piece.length;
        if (!socket.write(piece)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
}

function adversarialBodies(): Record<string, { head: Buffer; filler: Buffer }> {
  return {
    'nested arrays': { head: Buffer.from('{"emails":'), filler: Buffer.alloc(MIB, '[') },
    'valid start + huge extra field': {
      head: Buffer.from('{"emails":["a@valid.example.com"],"padding":['),
      filler: Buffer.from('1234567,'.repeat(MIB / 8)),
    },
    'one endless "address"': { head: Buffer.from('{"emails":["'), filler: Buffer.alloc(MIB, 'x') },
  };
}

/** 500,000 distinct addresses of 254 characters, as one JSON body. */
function bigValidBody(): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < 500_000; i++) {
    const tail = `${String(i).padStart(6, '0')}@valid.example.com`;
    parts.push(`"${'a'.repeat(254 - tail.length)}${tail}"`);
  }
  return Buffer.from(`{"emails":[${parts.join(',')}],"notify_email":false}`);
}

function submitBig(s: Server, body: Buffer): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  return new Promise((res, rej) => {
    const req = httpRequest(
      {
        host: s.url.hostname,
        port: s.url.port,
        method: 'POST',
        path: '/v1/verify/batch',
        headers: {
          authorization: `Bearer ${s.testKey}`,
          'content-type': 'application/json',
          'content-length': body.length,
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => res({ ms: performance.now() - started, status: response.statusCode ?? 0 }));
      },
    );
    req.on('error', rej);
    req.end(body);
  });
}

async function main(): Promise<void> {
  console.log(
    `bench:isolation ${new Date().toISOString()} server ${ROOT} load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const skip = new Set(args.skip.split(',').filter(Boolean));

  if (!skip.has('adversarial')) {
    const s = await startServer();
    try {
      const end = Date.now() + PROBE_MS;
      report('alone', await probe(s, () => Date.now() > end));
      for (const [name, { head, filler }] of Object.entries(adversarialBodies())) {
        let stop = false;
        const outcomes: string[] = [];
        const attack = (async () => {
          const until = Date.now() + PROBE_MS;
          while (!stop && Date.now() < until) {
            const r = await sendBody(s, head, filler, ADVERSARIAL_BYTES);
            outcomes.push(`${r.status}@${(r.sent / MIB).toFixed(1)}MiB`);
          }
          stop = true;
        })();
        const stats = await probe(s, () => stop);
        await attack;
        report(`150 MiB ${name}`, stats);
        const sample = outcomes.slice(0, 3).join(', ');
        console.log(
          `    ${outcomes.length} bodies sent; answers (status@bytes sent when answered): ${sample}${outcomes.length > 3 ? ', …' : ''}`,
        );
      }
      console.log(`    server peak RSS ${peakRssMb(s)} MB`);
    } finally {
      await stopServer(s);
    }
  }

  if (!skip.has('valid')) {
    const body = bigValidBody();
    const s = await startServer();
    try {
      const before = peakRssMb(s);
      let done = false;
      const submission = submitBig(s, body).finally(() => (done = true));
      const stats = await probe(s, () => done);
      const { ms, status } = await submission;
      report('valid 500,000 x 254 chars', stats);
      console.log(
        `    submission: HTTP ${status}, ${(body.length / MIB).toFixed(0)} MiB in ${(ms / 1000).toFixed(2)} s; server peak RSS ${peakRssMb(s)} MB (${before} MB before)`,
      );
    } finally {
      await stopServer(s);
    }
  }
  agent.destroy();
}

await main();
