/**
 * `npm run bench:sign-in`: the dashboard's sign-in under the attacks of issue 16, in one run so
 * that the figures compare as ratios on a shared machine. Starts the real `mailverdict serve` (a
 * child process, as test/kit/cli.ts runs it: dist/ when fresh, else the sources through tsx) on a
 * brand-new data directory (SQLite, default settings: 5 sign-ins per client address and second,
 * 10 failures per pair), sets the bootstrap owner's password through the invitation link, and
 * from several loopback client addresses (127.0.0.x as each socket's `localAddress`) measures:
 *
 *   (a) the owner's sign-in (then sign-out) latency on the idle server;
 *   (ref) the same during 40 concurrent GET /session without a cookie from 20 other client
 *       addresses: what any flood of cheap requests costs, for comparison;
 *   (b) the same during a flood of 40 concurrent bogus POST /invitations/accept and
 *       /password-resets/accept (unknown tokens) from 20 other client addresses;
 *   (c) the same during 40 concurrent wrong-password sign-ins for the owner's address from 20
 *       other client addresses (the owner must never be locked out);
 *   (c2) as (c) from 20 more addresses, by an attacker who solves every proof of work asked for;
 *   (d) the proof of work: altcha-lib's solver in Node on the server's challenges, and the
 *       verification of a solution (altcha-lib's verifySolution, as the server calls it);
 *   (e) one scrypt hash of src/services/people/passwords.ts.
 *
 * The floods run in a child process of their own (bench/kit/sign-in-flood.ts), as an attacker
 * would on another machine, so that their JavaScript does not delay the measured sign-ins in
 * this process's event loop (the machine's cores are still shared).
 *
 *   --sign-ins 30     sequential sign-ins per phase
 *   --challenges 20   proof-of-work challenges solved in (d)
 *   --new-browser     the owner keeps no device cookie (services/people/sign-in-device.ts): every
 *                     sign-in is a browser's first, slowed by the address's failures
 *
 * Every loop is bounded in count and in time (the whole run takes about a minute and a half on
 * the shared 2-core machine). The owner paces its sign-ins at one per 250 ms so that its own
 * client address stays under the per-address limit of 5 per second.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { createChallenge, solveChallenge, verifySolution, type Challenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { hashPassword } from '../src/services/people/passwords.js';
import {
  CHALLENGE_ALGORITHM,
  CHALLENGE_COST,
  CHALLENGE_COUNTER,
} from '../src/services/people/sign-in-challenge.js';
import { cleanEnv, spawnServe } from '../test/kit/cli.js';
import { cpuMicros } from './kit/scale.js';
import { dashboardRequest as send, type Answer } from './kit/dashboard-request.js';
import type { FloodPlan } from './kit/sign-in-flood.js';

const { values } = parseArgs({
  options: {
    'sign-ins': { type: 'string', default: '30' },
    challenges: { type: 'string', default: '20' },
    'new-browser': { type: 'boolean', default: false },
  },
});
/** The owner's browser drops its device cookie after each sign-in, as one that never signed in here. */
const NEW_BROWSER = values['new-browser'];
/** Sequential sign-ins per phase (a), (b), (c). */
const SIGN_INS = Number(values['sign-ins']);
/** Proof-of-work challenges solved in (d). */
const CHALLENGES = Number(values.challenges);
const FLOOD_CONCURRENCY = 40;
const FLOOD_CLIENTS = 20;
/** No phase runs longer than this, however slow the machine. */
const PHASE_LIMIT_MS = 45_000;
/** The owner's sign-ins start at most this often (5 per second and client address is the default limit). */
const PACE_MS = 250;
/** The flood gets this long to build up before the owner's first sign-in. */
const FLOOD_WARM_UP_MS = 1_500;
const OWNER_CLIENT = '127.0.0.2';
const PASSWORD = 'correct horse battery staple';

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function summary(ms: number[]): { p50: number; p99: number; max: number; n: number } {
  const sorted = [...ms].sort((x, y) => x - y);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? NaN,
    n: ms.length,
  };
}

const fmt = (ms: number): string => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** The owner's device cookie (`mv_device=...`), kept from one sign-in to the next like a browser's. */
let device: string | undefined;

interface OwnerRun {
  /** Time from the first attempt of a sign-in to its 200 (retries after 503 or 429 included). */
  latencies: number[];
  /** Answers other than 200 the owner got, by status. */
  refused: Map<number, number>;
  /** Sign-ins that never succeeded (within their attempts). */
  failed: number;
  serverCpuMs: number | null;
  wallMs: number;
}

/**
 * The owner signs in and out `SIGN_INS` times from their own client address. A 503 or 429 is
 * retried after its Retry-After, as the page would have the person do, and counted; the
 * latency is then the time until the 200.
 */
async function ownerSignIns(
  base: URL,
  email: string,
  serverPid: number | undefined,
  count = SIGN_INS,
): Promise<OwnerRun> {
  const latencies: number[] = [];
  const refused = new Map<number, number>();
  let failed = 0;
  const cpuBefore = cpuMicros(serverPid);
  const started = performance.now();
  for (let i = 0; i < count && performance.now() - started < PHASE_LIMIT_MS; i++) {
    const first = performance.now();
    let answer: Answer | undefined;
    for (let attempt = 0; attempt < 5; attempt++) {
      const paced = first + attempt * 1000;
      if (performance.now() < paced) await sleep(paced - performance.now());
      answer = await send(base, OWNER_CLIENT, 'POST', 'session', {
        body: { email, password: PASSWORD },
        ...(device === undefined ? {} : { headers: { cookie: device } }),
      });
      if (answer.status === 200) break;
      refused.set(answer.status, (refused.get(answer.status) ?? 0) + 1);
      if (answer.status !== 503 && answer.status !== 429) break;
      await sleep(Math.min(3_000, Number(answer.headers['retry-after'] ?? '1') * 1000));
    }
    if (answer?.status !== 200) {
      failed++;
      continue;
    }
    latencies.push(performance.now() - first);
    const cookies = [answer.headers['set-cookie'] ?? []].flat().map((c) => c.split(';')[0]!);
    const cookie = cookies.find((c) => c.startsWith('mv_session='))!;
    if (!NEW_BROWSER) device = cookies.find((c) => c.startsWith('mv_device=')) ?? device;
    const csrf = (JSON.parse(answer.body) as { csrf_token: string }).csrf_token;
    const out = await send(base, OWNER_CLIENT, 'DELETE', 'session', {
      headers: { cookie, 'x-csrf-token': csrf },
    });
    if (out.status !== 204) throw new Error(`sign-out answered ${out.status}: ${out.body}`);
    const next = first + PACE_MS;
    if (performance.now() < next) await sleep(next - performance.now());
  }
  const cpuAfter = cpuMicros(serverPid);
  return {
    latencies,
    refused,
    failed,
    serverCpuMs: cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / 1000,
    wallMs: performance.now() - started,
  };
}

interface Flood {
  /** Stops it; its answers by status (and error code) and its requests per second. */
  stop(): Promise<{ counts: Map<string, number>; perSecond: number; ms: number; solvingMs: number }>;
}

/** Starts the attacker's process (bench/kit/sign-in-flood.ts) and resolves once it runs. */
async function startFlood(plan: Omit<FloodPlan, 'concurrency' | 'maxMs'>): Promise<Flood> {
  const full: FloodPlan = { ...plan, concurrency: FLOOD_CONCURRENCY, maxMs: PHASE_LIMIT_MS + 10_000 };
  const child = fork(
    fileURLToPath(new URL('./kit/sign-in-flood.ts', import.meta.url)),
    [JSON.stringify(full)],
    {
      execArgv: ['--import', 'tsx'],
      stdio: 'inherit',
    },
  );
  const messages: unknown[] = [];
  let wake = (): void => undefined;
  child.on('message', (m) => {
    messages.push(m);
    wake();
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const next = async (): Promise<unknown> => {
    for (let i = 0; i < 600 && messages.length === 0; i++)
      await Promise.race([new Promise<void>((resolve) => (wake = resolve)), sleep(100), exited]);
    const m = messages.shift();
    if (m === undefined) throw new Error('the flood child said nothing');
    return m;
  };
  await next();
  return {
    async stop() {
      child.send('stop');
      const { counts, ms, solvingMs } = (await next()) as {
        counts: Record<string, number>;
        ms: number;
        solvingMs: number;
      };
      await exited;
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      return { counts: new Map(Object.entries(counts)), perSecond: total / (ms / 1000), ms, solvingMs };
    },
  };
}

const clientsFrom = (first: number): string[] =>
  Array.from({ length: FLOOD_CLIENTS }, (_, i) => `127.0.0.${first + i}`);

function printOwner(label: string, run: OwnerRun, idle: number | null): number {
  const s = summary(run.latencies);
  const refused = [...run.refused].map(([status, n]) => `${n} × ${status}`).join(', ') || 'none';
  const ratio = idle === null ? '1.00' : (s.p50 / idle).toFixed(2);
  console.log(
    `| ${label} | ${s.n} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${fmt(s.max)} | ${fmt(run.latencies[0] ?? NaN)} | ${run.latencies.filter((ms) => ms > 1000).length} | ${ratio} | ${refused} | ${run.failed} | ${run.serverCpuMs === null ? '-' : (run.serverCpuMs / 1000).toFixed(1)} |`,
  );
  return s.p50;
}

function printCounts(
  label: string,
  { counts, perSecond, ms, solvingMs }: Awaited<ReturnType<Flood['stop']>>,
): void {
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const parts = [...counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, n]) => `${key}: ${n}`)
    .join(', ');
  const work = solvingMs > 0 ? `, ${(solvingMs / 1000).toFixed(1)} s of it solving proofs of work` : '';
  console.log(
    `${label}: ${total} requests in ${(ms / 1000).toFixed(1)} s (${perSecond.toFixed(0)}/s${work}); ${parts}`,
  );
}

/** (d) The server's challenges solved by altcha-lib in Node, and what checking a solution costs. */
async function proofOfWork(base: URL): Promise<void> {
  const solveMs: number[] = [];
  const started = performance.now();
  for (let i = 0; i < CHALLENGES && performance.now() - started < PHASE_LIMIT_MS; i++) {
    const res = await send(base, '127.0.0.90', 'GET', 'session/challenge');
    if (res.status !== 200) throw new Error(`GET session/challenge answered ${res.status}`);
    const challenge = JSON.parse(res.body) as Challenge;
    const at = performance.now();
    const solution = await solveChallenge({ challenge, deriveKey, timeout: 30_000 });
    if (solution === null) throw new Error('a challenge was not solved in 30 s');
    solveMs.push(performance.now() - at);
  }
  const solve = summary(solveMs);
  console.log(
    `(d) proof of work, altcha-lib solveChallenge in Node (one core), ${solve.n} server challenges (${CHALLENGE_ALGORITHM} × ${CHALLENGE_COST}, counter ${CHALLENGE_COUNTER.min}-${CHALLENGE_COUNTER.max}): p50 ${fmt(solve.p50)} ms, p99 ${fmt(solve.p99)} ms, max ${fmt(solve.max)} ms`,
  );

  // Checking: the server's own call (services/people/sign-in-challenge.ts), on challenges made here with
  // the same parameters and secrets of the same length (the server's are derived from its key).
  const secrets = {
    hmacSignatureSecret: randomBytes(32).toString('hex'),
    hmacKeySignatureSecret: randomBytes(32).toString('hex'),
  };
  const payloads = [];
  for (let i = 0; i < 3; i++) {
    const challenge = await createChallenge({
      algorithm: CHALLENGE_ALGORITHM,
      cost: CHALLENGE_COST,
      counter: CHALLENGE_COUNTER.min + i,
      deriveKey,
      data: { purpose: 'sign-in', expires: Math.floor(Date.now() / 1000) + 300 },
      ...secrets,
    });
    const solution = await solveChallenge({ challenge, deriveKey, timeout: 30_000 });
    if (solution === null) throw new Error('a local challenge was not solved in 30 s');
    payloads.push({ challenge, solution });
  }
  const ROUNDS = 2_000;
  const at = performance.now();
  for (let i = 0; i < ROUNDS; i++) {
    const result = await verifySolution({ ...payloads[i % payloads.length]!, deriveKey, ...secrets });
    if (!result.verified) throw new Error('a solution did not verify');
  }
  const perCheckUs = ((performance.now() - at) / ROUNDS) * 1000;
  const makeAt = performance.now();
  for (let i = 0; i < 200; i++)
    await createChallenge({
      algorithm: CHALLENGE_ALGORITHM,
      cost: CHALLENGE_COST,
      counter: CHALLENGE_COUNTER.max,
      deriveKey,
      ...secrets,
    });
  const perMakeUs = ((performance.now() - makeAt) / 200) * 1000;
  console.log(
    `(d) server side: verifySolution ${perCheckUs.toFixed(0)} µs per solution (${ROUNDS} checks), createChallenge ${perMakeUs.toFixed(0)} µs per challenge (200); solving costs the client ${(solve.p50 / (perCheckUs / 1000)).toFixed(0)} × the server's check (p50)`,
  );
}

async function main(): Promise<void> {
  console.log(`# bench:sign-in, ${new Date().toISOString()}, Node.js ${process.version}`);
  console.log(`load average at start: ${load()}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-bench-sign-in-'));
  const serve = await spawnServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], {
    env: cleanEnv({ MAILVERDICT_LOG_LEVEL: 'warn' }),
    withinMs: 120_000,
  });
  try {
    if (serve.keys === undefined) throw new Error('serve wrote no bootstrap keys');
    const base = new URL(serve.url);
    const pid = serve.child.pid;
    const email = serve.keys.owner_email;
    const token = serve.keys.owner_invitation_link.split('#')[1]!;
    const accepted = await send(base, OWNER_CLIENT, 'POST', 'invitations/accept', {
      body: { token, password: PASSWORD },
    });
    if (accepted.status !== 200) throw new Error(`accepting the invitation answered ${accepted.status}`);
    console.log(
      `serve ${serve.url} (pid ${pid}), data dir ${dataDir}, owner ${email}, ${NEW_BROWSER ? 'a new browser each time (no device cookie)' : 'one browser (keeps its device cookie)'}`,
    );
    // Warm up the server's code paths (and the owner's pace window) before measuring.
    await ownerSignIns(base, email, pid, 5);

    // (e) first, on the idle server: scrypt through the same bounded queue, in this process.
    const hashMs: number[] = [];
    for (let i = 0; i < 10; i++) {
      const at = performance.now();
      await hashPassword(`bench password ${i}`);
      hashMs.push(performance.now() - at);
    }
    const hash = summary(hashMs);

    console.log('');
    console.log(
      '| phase | sign-ins | p50 ms | p99 ms | max ms | first ms | over 1 s | p50 / idle p50 | owner refused (then retried) | owner never signed in | server CPU s |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|');
    const idle = await ownerSignIns(base, email, pid);
    const idleP50 = printOwner('(a) idle', idle, null);

    const baseUrl = base.toString();
    // For reference: as many requests in flight to the cheapest route, GET /session without a
    // cookie (401, no rate limit, no store): what any flood of HTTP requests costs. Before (c) and
    // (c2), whose last failures would delay its first sign-in.
    let flood = await startFlood({ base: baseUrl, clients: clientsFrom(60), kind: 'session' });
    await sleep(FLOOD_WARM_UP_MS);
    const underAny = await ownerSignIns(base, email, pid);
    const anyCounts = await flood.stop();
    printOwner('(ref) 40 GET /session without a cookie, 20 clients', underAny, idleP50);

    // (b) bogus links: unknown tokens of the real shape (43 characters of base64url).
    flood = await startFlood({ base: baseUrl, clients: clientsFrom(10), kind: 'links' });
    await sleep(FLOOD_WARM_UP_MS);
    const underLinks = await ownerSignIns(base, email, pid);
    const linkCounts = await flood.stop();
    printOwner('(b) 40 bogus link accepts, 20 clients', underLinks, idleP50);

    // (c) wrong passwords for the owner's own address from 20 other clients.
    flood = await startFlood({ base: baseUrl, clients: clientsFrom(30), kind: 'guesses', email });
    await sleep(FLOOD_WARM_UP_MS);
    const underGuesses = await ownerSignIns(base, email, pid);
    const guessCounts = await flood.stop();
    printOwner("(c) 40 wrong passwords for the owner's address, 20 clients", underGuesses, idleP50);

    // (c2) the same from 20 more clients, by an attacker who solves every proof of work asked
    // for, until each pair's budget is spent.
    flood = await startFlood({ base: baseUrl, clients: clientsFrom(100), kind: 'guesses-pow', email });
    await sleep(FLOOD_WARM_UP_MS);
    const underWork = await ownerSignIns(base, email, pid);
    const workCounts = await flood.stop();
    printOwner('(c2) as (c), the attacker solving the proofs of work', underWork, idleP50);

    console.log('');
    printCounts('(b) flood answers', linkCounts);
    printCounts('(c) flood answers', guessCounts);
    printCounts('(c2) flood answers', workCounts);
    printCounts('(ref) flood answers', anyCounts);
    console.log('');
    await proofOfWork(base);
    console.log(
      `(e) scrypt (N=2^15, r=8, p=1), 10 hashes one at a time: p50 ${fmt(hash.p50)} ms, max ${fmt(hash.max)} ms`,
    );
    console.log('');
    const ratio = (run: OwnerRun) => (summary(run.latencies).p50 / idleP50).toFixed(2);
    console.log(
      `ratio b/a (p50): ${ratio(underLinks)}; ratio c/a (p50): ${ratio(underGuesses)}; ratio c2/a (p50): ${ratio(underWork)}; ratio ref/a (p50): ${ratio(underAny)}`,
    );
    for (const [name, run] of [
      ['(c)', underGuesses],
      ['(c2)', underWork],
    ] as const) {
      const locked = run.failed > 0 || (run.refused.get(429) ?? 0) > 0;
      console.log(
        locked
          ? `DEFECT: the owner was refused during ${name}: ${[...run.refused].map(([s, n]) => `${n} × ${s}`).join(', ')}; ${run.failed} sign-ins never succeeded`
          : `the owner signed in every time during ${name}: not locked out`,
      );
    }
  } finally {
    await serve.stop();
    rmSync(dataDir, { recursive: true, force: true });
    console.log(`load average at end: ${load()}`);
  }
}

await main();
