/**
 * A real `mailverdict serve` child process on a data directory, for the faults that need a
 * signal: started through test/cli/run-cli.ts (the TypeScript sources, a clean environment), its
 * `listening` line read, its exit awaited with a bound. Test keys only: live keys would probe
 * through the system's resolver.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanEnv, spawnCli } from '../kit/cli.js';

export interface ServeChild {
  child: ChildProcess;
  url: string;
  /** The bootstrap test key: on the first start of a data directory only. */
  testKey: string | undefined;
  /** The exit code (null when killed by a signal), once the process has ended. */
  exited: Promise<number | null>;
  /** What it wrote to stderr so far (warnings and errors at MAILVERDICT_LOG_LEVEL=warn). */
  stderr(): string;
}

/** src/runtime.ts: how long in-flight requests get after SIGTERM before their connections are cut. */
export const SHUTDOWN_GRACE_MS = 10_000;

const started = new Set<ChildProcess>();

/** Starts `serve --port 0` on `dataDir` with MAILVERDICT_* `settings`; resolves once it listens. */
export async function startServe(
  dataDir: string,
  settings: Record<string, string> = {},
): Promise<ServeChild> {
  const child = spawnCli(
    ['serve', '--port', '0', '--data-dir', dataDir, '--json'],
    cleanEnv({ MAILVERDICT_LOG_LEVEL: 'warn', ...settings }),
  );
  started.add(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      started.delete(child);
      resolve(code);
    }),
  );
  const listening = new Promise<{ url: string; keys_file?: string }>((resolve) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolve(JSON.parse(line) as { url: string; keys_file?: string }));
  });
  const first = await Promise.race([
    listening,
    exited.then((code) => new Error(`serve exited with ${code} before listening: ${stderr}`)),
    sleep(20_000).then(() => new Error(`serve did not listen within 20 s: ${stderr}`)),
  ]);
  if (first instanceof Error) {
    child.kill('SIGKILL');
    throw first;
  }
  const keys =
    first.keys_file === undefined
      ? undefined
      : (JSON.parse(readFileSync(first.keys_file, 'utf8')) as { test_key: string });
  return { child, url: first.url, testKey: keys?.test_key, exited, stderr: () => stderr };
}

/** Waits up to `withinMs` for the process to end; its exit code. */
export async function exitWithin(serve: ServeChild, withinMs: number): Promise<number | null> {
  const code = await Promise.race([serve.exited, sleep(withinMs).then(() => 'late' as const)]);
  if (code === 'late') throw new Error(`serve still running after ${withinMs} ms: ${serve.stderr()}`);
  return code;
}

/** Sends `signal` and waits up to `withinMs` for the exit: the code and how long it took. */
export async function stopServe(
  serve: ServeChild,
  withinMs: number,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<{ code: number | null; ms: number }> {
  const at = performance.now();
  serve.child.kill(signal);
  const code = await exitWithin(serve, withinMs);
  return { code, ms: performance.now() - at };
}

/** What the process wrote to stderr that is worse than a warning: pino level 50 and up, or not a log line at all. */
export function loggedErrors(serve: ServeChild): string[] {
  return serve
    .stderr()
    .split('\n')
    .filter((line) => {
      try {
        return (JSON.parse(line) as { level?: number }).level! >= 50;
      } catch {
        // Not a log line: Node's own warnings, a crash's stack trace.
        return line.trim() !== '';
      }
    });
}

/** SIGKILLs what is still running (afterAll: a failed test must not leave a server behind). */
export function killServes(): void {
  for (const child of started) child.kill('SIGKILL');
}

/**
 * A request with the key; a 429 (the bootstrap account's free plan allows 5 requests/s) is
 * retried after its Retry-After, at most 20 times.
 */
export async function callApi(url: string, key: string, init: RequestInit = {}): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(url, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers } });
    if (res.status !== 429 || attempt >= 20) return res;
    await res.arrayBuffer();
    await sleep(Math.min(2_000, Number(res.headers.get('retry-after') ?? '1') * 1000));
  }
}
