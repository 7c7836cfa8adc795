/**
 * The real `mailverdict` command as a child process, for tests and benches: the TypeScript sources
 * through tsx, or the built dist/ as `npm start` runs it; in an environment without the
 * developer's MAILVERDICT_* settings. `spawnServe` starts `serve` and waits for its first JSON
 * line; `spawnMailverdict` does the same for any long-running command (`worker`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
/** The built command (`npm run build`). */
export const BUILT_MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** The suite's own settings, which a child keeps: the test password hash cost (vitest.config.ts). */
const SUITE_SETTINGS = new Set(['MAILVERDICT_PASSWORD_HASH_COST']);

/** Environment without the developer's MAILVERDICT_* settings, plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('MAILVERDICT_') || SUITE_SETTINGS.has(k)) env[k] = v;
  return { ...env, ...extra };
}

export interface CliOptions {
  /** Run dist/cli/main.js (it must be built); without it, dist/ runs only when it is fresh. */
  built?: boolean;
  /** What becomes of the child's stderr (default 'pipe'). */
  stderr?: 'pipe' | 'inherit' | 'ignore';
  /** The checkout to run (a before/after comparison runs another one); default this one. */
  root?: string;
}

const freshness = new Map<string, boolean>();

/**
 * Whether `root`'s dist/ was built from its sources as they are now: dist/cli/main.js is newer
 * than every file under src/. `npm test` builds right before the suite, so there the built
 * command runs, which starts in about half the time of tsx compiling the sources (1.4 s against
 * 2.8-3.4 s per process on this 2-core machine, and the suites start a few hundred); after an
 * edit to src/ without a build, tsx runs the sources as they are.
 */
function builtIsFresh(root: string): boolean {
  const known = freshness.get(root);
  if (known !== undefined) return known;
  let fresh = false;
  try {
    const built = statSync(join(root, 'dist/cli/main.js')).mtimeMs;
    const newest = (dir: string): number =>
      readdirSync(dir, { withFileTypes: true }).reduce((latest, entry) => {
        const path = join(dir, entry.name);
        return Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
      }, 0);
    fresh = built >= newest(join(root, 'src'));
  } catch {
    fresh = false;
  }
  freshness.set(root, fresh);
  return fresh;
}

/** How to run `mailverdict <args>`: node with the built dist/ (when fresh) or the sources through tsx. */
export function cliCommand(
  args: string[],
  options: CliOptions = {},
): { command: string; args: string[]; cwd: string } {
  const root = options.root ?? ROOT;
  const main =
    options.built === true || builtIsFresh(root)
      ? [join(root, 'dist/cli/main.js')]
      : ['--import', 'tsx', join(root, 'src/cli/main.ts')];
  return { command: process.execPath, args: [...main, ...args], cwd: root };
}

export function spawnCli(
  args: string[],
  env: NodeJS.ProcessEnv = cleanEnv(),
  options: CliOptions = {},
): ChildProcess {
  const cli = cliCommand(args, options);
  return spawn(cli.command, cli.args, {
    cwd: cli.cwd,
    env,
    stdio: ['ignore', 'pipe', options.stderr ?? 'pipe'],
  });
}

/** Where util-linux's `script` is, which runs a command on a pseudo-terminal; null without it. */
export const SCRIPT_COMMAND: string | null =
  ['/usr/bin/script', '/bin/script'].find((p) => existsSync(p)) ?? null;

const shellQuote = (arg: string): string => `'${arg.replaceAll("'", "'\\''")}'`;

/**
 * `mailverdict <args>` with its stdin, stdout and stderr on a pseudo-terminal (`script -qefc`), as
 * a person at a terminal runs it: what the command writes arrives on the child's stdout, with
 * CRLF line ends. Throws when `script` is missing (check SCRIPT_COMMAND first).
 */
export function spawnInTerminal(
  args: string[],
  env: NodeJS.ProcessEnv = cleanEnv(),
  options: CliOptions = {},
): ChildProcess {
  if (SCRIPT_COMMAND === null) throw new Error('util-linux script is not installed');
  const cli = cliCommand(args, options);
  const line = [cli.command, ...cli.args].map(shellQuote).join(' ');
  const child = spawn(SCRIPT_COMMAND, ['-qefc', line, '/dev/null'], {
    cwd: cli.cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: string[],
  env?: NodeJS.ProcessEnv,
  options: CliOptions = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, env, options);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface SpawnOptions extends CliOptions {
  /** Default: `cleanEnv({ MAILVERDICT_LOG_LEVEL: 'warn' })`. */
  env?: NodeJS.ProcessEnv;
  /** How long the command gets to print its first JSON line (default 60 s: tsx compiles the sources). */
  withinMs?: number;
}

/** The first JSON line a long-running command prints with --json: `listening`, `worker_started`. */
export interface FirstLine {
  event: string;
  url?: string;
  worker?: string;
  account_id?: string;
  keys_file?: string;
  [field: string]: unknown;
}

export interface Stopped {
  /** The exit code, null when a signal ended it. */
  code: number | null;
  ms: number;
  /** It had not exited within the bound and was SIGKILLed. */
  late: boolean;
}

export interface RunningCommand {
  child: ChildProcess;
  first: FirstLine;
  /** That line as printed. */
  line: string;
  /** The exit code (null when killed by a signal), once the process has ended. */
  exited: Promise<number | null>;
  /** What it wrote to stderr so far (with `stderr: 'pipe'`). */
  stderr: () => string;
  /** Sends `signal` (SIGTERM) and waits up to `withinMs` (15 s) for the exit; SIGKILL when late. */
  stop: (options?: { signal?: NodeJS.Signals; withinMs?: number }) => Promise<Stopped>;
}

/** The bootstrap account's keys, as `serve` writes them to bootstrap-keys.json on a first start. */
export interface BootstrapKeys {
  account_id: string;
  live_key: string;
  test_key: string;
  owner_email: string;
  owner_invitation_link: string;
}

export interface Served extends RunningCommand {
  url: string;
  /** On the first start of a data directory with bootstrap on; undefined otherwise. */
  keys: BootstrapKeys | undefined;
}

const running = new Set<ChildProcess>();
// A test worker or bench that ends without its clean-up (a crash, a timeout) leaves no child behind.
process.once('exit', killAll);

/** SIGKILLs every command these functions started that is still running (afterAll). */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

/** Sends `signal` and waits up to `withinMs` for `child` to exit; SIGKILL when late. */
export async function stopProcess(
  child: ChildProcess,
  { signal = 'SIGTERM', withinMs = 15_000 }: { signal?: NodeJS.Signals; withinMs?: number } = {},
): Promise<Stopped> {
  const at = performance.now();
  const done = (): Stopped => ({ code: child.exitCode, ms: performance.now() - at, late: false });
  if (child.exitCode !== null || child.signalCode !== null) return done();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const late = await Promise.race([
    exited.then(() => false),
    sleep(withinMs, undefined, { ref: false }).then(() => true),
  ]);
  if (!late) return done();
  child.kill('SIGKILL');
  await exited;
  return { code: child.exitCode, ms: performance.now() - at, late: true };
}

/**
 * Starts `mailverdict <args> --json` and resolves once it has printed its first JSON line; rejects
 * (and SIGKILLs it) when it exits before or stays silent for `withinMs`.
 */
export async function spawnMailverdict(args: string[], options: SpawnOptions = {}): Promise<RunningCommand> {
  const withinMs = options.withinMs ?? 60_000;
  const child = spawnCli(
    [...args, '--json'],
    options.env ?? cleanEnv({ MAILVERDICT_LOG_LEVEL: 'warn' }),
    options,
  );
  running.add(child);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  const firstLine = new Promise<{ first: FirstLine; line: string }>((resolve) => {
    const lines = createInterface({ input: child.stdout! });
    const onLine = (line: string): void => {
      if (!line.startsWith('{')) return;
      const parsed = JSON.parse(line) as FirstLine;
      if (parsed.event === undefined) return;
      lines.off('line', onLine);
      resolve({ first: parsed, line });
    };
    lines.on('line', onLine);
  });
  const name = args[0] ?? 'mailverdict';
  const started = await Promise.race([
    firstLine,
    exited.then((code) => new Error(`${name} exited with ${code} before starting: ${stderr}`)),
    sleep(withinMs, undefined, { ref: false }).then(
      () => new Error(`${name} did not start within ${withinMs} ms: ${stderr}`),
    ),
  ]);
  if (started instanceof Error) {
    child.kill('SIGKILL');
    throw started;
  }
  return {
    child,
    ...started,
    exited,
    stderr: () => stderr,
    stop: (stopOptions) => stopProcess(child, stopOptions),
  };
}

/** Starts `mailverdict serve <args> --json`; resolves once it listens, with its URL and bootstrap keys. */
export async function spawnServe(args: string[], options: SpawnOptions = {}): Promise<Served> {
  const serve = await spawnMailverdict(['serve', ...args], options);
  if (serve.first.url === undefined) throw new Error(`serve printed no URL: ${JSON.stringify(serve.first)}`);
  const keys =
    serve.first.keys_file === undefined
      ? undefined
      : (JSON.parse(readFileSync(serve.first.keys_file, 'utf8')) as BootstrapKeys);
  return { ...serve, url: serve.first.url, keys };
}

/**
 * A v1 API call with a key to a spawned serve; a 429 (the bootstrap account's free plan allows 5
 * requests/s) is retried after its Retry-After (2 s at most), `retries` times at most.
 */
export async function callWithKey(
  url: string,
  key: string,
  init: RequestInit = {},
  retries = 20,
): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(url, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers } });
    if (res.status !== 429 || attempt >= retries) return res;
    await res.arrayBuffer();
    await sleep(Math.min(2_000, Number(res.headers.get('retry-after') ?? '1') * 1000));
  }
}
