/**
 * A real `mailverdict serve` child process on a data directory, for the faults that need a
 * signal: started by `spawnServe` of test/kit/cli.ts (the TypeScript sources, a clean
 * environment), its exit awaited with a bound. Test keys only: live keys would probe
 * through the system's resolver.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanEnv, killAll, spawnServe, type Served } from '../kit/cli.js';

export interface ServeChild extends Served {
  /** The bootstrap test key: on the first start of a data directory only. */
  testKey: string | undefined;
}

/** src/runtime.ts: how long in-flight requests get after SIGTERM before their connections are cut. */
export const SHUTDOWN_GRACE_MS = 10_000;

/** Starts `serve --port 0` on `dataDir` with MAILVERDICT_* `settings`; resolves once it listens. */
export async function startServe(
  dataDir: string,
  settings: Record<string, string> = {},
): Promise<ServeChild> {
  const serve = await spawnServe(['--port', '0', '--data-dir', dataDir], {
    env: cleanEnv({ MAILVERDICT_LOG_LEVEL: 'warn', ...settings }),
    // Start-up only; generous for a loaded two-core machine (20 s ran out at load 25).
    withinMs: 60_000,
  });
  return { ...serve, testKey: serve.keys?.test_key };
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
  const { code, ms, late } = await serve.stop({ signal, withinMs });
  if (late) throw new Error(`serve still running after ${withinMs} ms: ${serve.stderr()}`);
  return { code, ms };
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
export const killServes = killAll;

/** A request with the key; a 429 is retried after its Retry-After, at most 20 times. */
export { callWithKey as callApi } from '../kit/cli.js';
