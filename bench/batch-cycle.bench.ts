/**
 * `npm run bench:batch`, part 4: one batch's whole cycle through the default `serve` (embedded
 * workers, SQLite) and the peak RSS of each phase, measured from outside the process:
 *   submit  POST /v1/verify/batch until its 202;
 *   run     the embedded workers verify the job (polled with GET /v1/jobs/:id until completed);
 *   download GET /v1/jobs/:id/results?format=csv, the whole body read by the client.
 * Before each phase the serve process's peak is reset (`5` written to /proc/<pid>/clear_refs) and
 * after it its `VmHWM` is read: the phase's own peak. The cycle's peak is the largest of the three.
 *
 * Each cycle runs with the test key and then with the live key (`--keys test,live`, the default;
 * `--live` is `--keys live`). The test key's chunks go through the same claim, decode, encode and
 * completion as a live job's, with fixed verdicts instead of probes. The live key runs against fake
 * mail hosts and a fake DNS server on loopback (bench/fake-mta-pipelining.ts in a child process,
 * 1 ms per reply; 100 domains on 10 MX hosts, a tenth of the mailboxes unknown): the pooled
 * engine, the job's repeat sharing and the result cache (its default bounds, unless
 * MAILVERDICT_RESULT_CACHE_* are set) then run as for a user. Nothing leaves loopback. The cycle's
 * peak of each key is printed last.
 *
 * Two address shapes, one fresh serve and data directory each: short (`first.last123@gmail.com`,
 * about 30 characters) and 254 characters (a 64-character local part, a long domain).
 *
 * `serve` runs from dist/ (`npm run build`), as a user runs it; `--tsx` runs the sources through
 * tsx instead (about 50 MB more RSS for the transpiler).
 *
 *   npm run bench:batch:cycle [-- --addresses N --lengths short,254 --keys test,live --live --tsx]   (builds dist/ first)
 *   (smoke test: --addresses 20000)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchWorld } from './fake-mta-pipelining.js';
import { startBenchChild, type BenchChild } from './kit/bench-child.js';

const ROOT = join(import.meta.dirname, '..');

interface Args {
  addresses: number;
  lengths: ('short' | '254')[];
  /** Run the sources through tsx (about 50 MB more RSS) instead of the build a user runs. */
  tsx: boolean;
  /** Which keys' cycles run: the test key's, and the live key's against fake mail hosts on loopback. */
  keys: ('test' | 'live')[];
}

function parseArgs(argv: string[]): Args {
  const args: Args = { addresses: 500_000, lengths: ['short', '254'], tsx: false, keys: ['test', 'live'] };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '--tsx') {
      args.tsx = true;
      continue;
    }
    if (flag === '--live') {
      args.keys = ['live'];
      continue;
    }
    const value = argv[++i];
    if (flag === '--addresses' && Number.isInteger(Number(value)) && Number(value) > 0)
      args.addresses = Number(value);
    else if (flag === '--keys' && value !== undefined)
      args.keys = value.split(',').map((k) => {
        if (k !== 'test' && k !== 'live') throw new Error(`bad key ${k}`);
        return k;
      });
    else if (flag === '--lengths' && value !== undefined)
      args.lengths = value.split(',').map((l) => {
        if (l !== 'short' && l !== '254') throw new Error(`bad length ${l}`);
        return l;
      });
    else throw new Error(`bad option ${flag}`);
  }
  return args;
}

/** `--live`: the fake world's domains (d0 to d99), each on one of 10 MX hosts. */
const LIVE_DOMAINS = 100;
const LIVE_HOSTS = Array.from({ length: 10 }, (_, i) => `127.0.1.${i + 1}`);

/**
 * The i-th address: short, or exactly 254 characters (local part 64, labels of at most 63). Test
 * key: the test domain's fixed verdicts and one ordinary domain; live: the fake world's domains,
 * every tenth mailbox unknown (the fake hosts accept the local parts starting with "user").
 */
function address(i: number, length: Args['lengths'][number], live: boolean): string {
  const domains = ['valid.example.com', 'invalid.example.com', 'disposable.example.com', 'gmail.com'];
  const user = `${i % 10 === 3 ? 'nobody' : 'user'}${i}`;
  if (length === 'short')
    return live
      ? `${user}@d${i % LIVE_DOMAINS}.bench-mail.test`
      : `first.last${i}@${domains[i % domains.length]}`;
  const local = (live ? `${user}.` : `first.last${i}.`).padEnd(64, 'x');
  const tail = live ? `.d${i % LIVE_DOMAINS}.bench-mail.test` : '.example.com';
  let domain = '';
  while (local.length + 1 + domain.length + tail.length < 254) {
    const room = 254 - (local.length + 1 + domain.length + tail.length);
    // A label, then a dot unless it is the last one before the tail.
    const label = Math.min(63, room - (room > 63 ? 1 : 0));
    domain += 'd'.repeat(label) + (room > 63 ? '.' : '');
  }
  return `${local}@${domain}${tail}`;
}

function body(n: number, length: Args['lengths'][number], live: boolean): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(JSON.stringify(address(i, length, live)));
  return Buffer.from(`{"emails":[${parts.join(',')}],"notify_email":false}`);
}

interface Server {
  child: ChildProcess;
  url: string;
  key: string;
}

const BUILT_CLI = join(ROOT, 'dist', 'cli', 'main.js');

/** Refuses a missing build and warns of one older than the sources (`npm run build` makes it). */
function checkBuild(): void {
  if (!existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: run \`npm run build\` or pass --tsx`);
  const built = statSync(BUILT_CLI).mtimeMs;
  const newer = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter(
    (f) => f.endsWith('.ts') && statSync(join(ROOT, 'src', f)).mtimeMs > built,
  );
  if (newer.length > 0)
    console.warn(
      `warning: dist/ is older than ${newer.length} source files (e.g. src/${newer[0]}): npm run build`,
    );
}

/** The fake world of `--live`: its mail hosts' port and its DNS server. */
async function startFakeWorld(length: Args['lengths'][number]): Promise<BenchChild<unknown>> {
  const domains: Record<string, number> = {};
  // The domain part of address d (LIVE_DOMAINS apart) is the same for every address of it.
  for (let d = 0; d < LIVE_DOMAINS; d++)
    domains[address(d, length, true).split('@')[1]!] = d % LIVE_HOSTS.length;
  const world: BenchWorld = {
    hosts: LIVE_HOSTS,
    latencyMs: 1,
    domains,
    catchAllDomains: [],
    hardErrorLimit: 20,
  };
  return startBenchChild(new URL('./fake-mta-pipelining.ts', import.meta.url), world);
}

async function startServe(dataDir: string, tsx: boolean, world: BenchChild<unknown> | null): Promise<Server> {
  const cli = tsx ? ['--import', 'tsx', 'src/cli/main.ts'] : [BUILT_CLI];
  const child = spawn(process.execPath, [...cli, 'serve', '--port', '0', '--data-dir', dataDir, '--json'], {
    cwd: ROOT,
    // The default serve (embedded workers on); only the plan is widened, so that polling is not
    // throttled and the quota admits the job.
    env: {
      ...process.env,
      MAILVERDICT_LOG_LEVEL: 'warn',
      MAILVERDICT_PLANS: JSON.stringify({
        free: { rate_limit_per_second: 1000, monthly_quota: 10_000_000 },
      }),
      // --live: probes go to the fake world on loopback, and only there.
      ...(world === null
        ? {}
        : {
            MAILVERDICT_DNS_SERVERS: world.dns,
            MAILVERDICT_SMTP_PORT: String(world.port),
            MAILVERDICT_ALLOW_INTERNAL_TARGETS: 'true',
          }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const e = JSON.parse(line) as { event: string; url: string; keys_file?: string };
      if (e.event !== 'listening') return;
      if (e.keys_file === undefined) return reject(new Error('serve printed no keys file'));
      const keys = JSON.parse(readFileSync(e.keys_file, 'utf8')) as { test_key: string; live_key: string };
      resolve({ child, url: e.url, key: world === null ? keys.test_key : keys.live_key });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

const kibOf = (pid: number, field: string): number =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

/** Runs `phase` with the process's peak RSS reset before; returns its result and that peak (MB). */
async function measured<T>(pid: number, phase: () => Promise<T>) {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  const t0 = performance.now();
  const result = await phase();
  return { result, ms: performance.now() - t0, peakMB: (kibOf(pid, 'VmHWM') * 1024) / 1e6 };
}

async function cycle(n: number, length: Args['lengths'][number], live: boolean, args: Args) {
  const payload = body(n, length, live);
  const dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-bench-cycle-'));
  const world = live ? await startFakeWorld(length) : null;
  const server = await startServe(dataDir, args.tsx, world);
  const pid = server.child.pid!;
  const auth = { authorization: `Bearer ${server.key}` };
  try {
    await sleep(500);
    const idleMB = (kibOf(pid, 'VmRSS') * 1024) / 1e6;
    const submit = await measured(pid, async () => {
      const res = await fetch(`${server.url}/v1/verify/batch`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: payload,
      });
      const json = (await res.json()) as { job_id: string };
      if (res.status !== 202) throw new Error(`submit answered ${res.status}: ${JSON.stringify(json)}`);
      return json.job_id;
    });
    const jobId = submit.result;
    const run = await measured(pid, async () => {
      for (;;) {
        const res = await fetch(`${server.url}/v1/jobs/${jobId}`, { headers: auth });
        const job = (await res.json()) as { status: string };
        if (job.status === 'completed') return;
        if (job.status === 'failed') throw new Error(`job ${jobId} failed`);
        await sleep(200);
      }
    });
    const download = await measured(pid, async () => {
      const res = await fetch(`${server.url}/v1/jobs/${jobId}/results?format=csv`, { headers: auth });
      if (res.status !== 200) throw new Error(`results answered ${res.status}`);
      let bytes = 0;
      let lines = 0;
      // The verdicts, counted by status (the second cell: no generated address holds a comma).
      const statuses: Record<string, number> = {};
      let partial = '';
      const decoder = new TextDecoder();
      for await (const piece of res.body!) {
        bytes += piece.length;
        const rows = (partial + decoder.decode(piece, { stream: true })).split('\r\n');
        partial = rows.pop()!;
        for (const row of rows) {
          if (lines++ === 0) continue;
          const status = row.split(',')[1] ?? '?';
          statuses[status] = (statuses[status] ?? 0) + 1;
        }
      }
      if (lines !== n + 1) throw new Error(`expected ${n + 1} CSV lines, got ${lines}`);
      return { bytes, statuses };
    });
    return {
      bodyMB: payload.length / 1e6,
      idleMB,
      submit,
      run,
      download,
      csvMB: download.result.bytes / 1e6,
      statuses: download.result.statuses,
    };
  } finally {
    await stop(server.child);
    await world?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const fmt = (x: number, digits = 0) => x.toLocaleString('en', { maximumFractionDigits: digits });

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (!args.tsx) checkBuild();
  console.log(`# batch cycle benchmark — ${new Date().toISOString()}`);
  console.log(
    `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fmt(totalmem() / 2 ** 30)} GiB, Node.js ${process.version}, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(
        ' ',
      )}; serve: ${args.tsx ? 'src/ through tsx' : 'dist/ (the build)'}; live key: fake mail hosts on loopback; result cache: ${process.env.MAILVERDICT_RESULT_CACHE_MEMORY ?? 'default'} MB, ${process.env.MAILVERDICT_RESULT_CACHE_SIZE ?? 'default'} answers\n`,
  );
  console.log(
    '| key | addresses | length | body MB | idle RSS (MB) | submit: s / peak MB | run: s / peak MB | download CSV: MB, s / peak MB | cycle peak RSS (MB) |',
  );
  console.log('|---|---:|---|---:|---:|---:|---:|---:|---:|');
  const verdicts: [string, Record<string, number>][] = [];
  const peaks: Partial<Record<Args['keys'][number], number>> = {};
  for (const key of args.keys)
    for (const length of args.lengths) {
      const r = await cycle(args.addresses, length, key === 'live', args);
      verdicts.push([`${key}, ${length}`, r.statuses]);
      const peak = Math.max(r.submit.peakMB, r.run.peakMB, r.download.peakMB);
      peaks[key] = Math.max(peaks[key] ?? 0, peak);
      const s = (ms: number) => fmt(ms / 1000, 1);
      console.log(
        `| ${key} | ${fmt(args.addresses)} | ${length} | ${fmt(r.bodyMB, 1)} | ${fmt(r.idleMB)} | ${s(r.submit.ms)} / ${fmt(r.submit.peakMB)} | ${s(r.run.ms)} / ${fmt(r.run.peakMB)} | ${fmt(r.csvMB, 1)}, ${s(r.download.ms)} / ${fmt(r.download.peakMB)} | **${fmt(peak)}** |`,
      );
    }
  for (const [key, peak] of Object.entries(peaks))
    console.log(`\ncycle peak RSS, ${key} key: ${fmt(peak)} MB (target: under 300 MB)`);
  for (const [length, statuses] of verdicts)
    console.log(`\nverdicts (${length}): ${JSON.stringify(statuses)}`);
  console.log(
    `\nload average after: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
}

await main();
