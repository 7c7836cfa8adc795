/**
 * What test/container/container.ts needs to drive podman: the runtime wrapper, containers run
 * with host networking and labelled for clean-up, loopback HTTP, bounded waits, and steps that
 * print their duration.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const RUNTIME = join(ROOT, 'scripts/container/runc-without-rlimits');
export const IMAGE = 'mailverdict:ci';
/** The image's user (Dockerfile: USER 10001:10001). */
export const IMAGE_UID = 10001;
export const RUN_ID = randomBytes(4).toString('hex');
export const LABEL = `mailverdict-ci=${RUN_ID}`;
/** Bound on every wait for a container (start, a job): generous for two busy cores. */
export const WAIT_MS = 180_000;

export const execFileP = promisify(execFile);
/** Steps that passed so far. */
export const tally = { passed: 0 };
/** Undo actions (containers, volumes, databases), run in reverse order at the end. */
export const cleanups: (() => Promise<void>)[] = [];

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** Runs one named step, printing it and how long it took. */
export async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  process.stdout.write(`--- ${name}\n`);
  const value = await run();
  tally.passed++;
  process.stdout.write(`    ok (${seconds(performance.now() - t0)})\n`);
  return value;
}

export function note(text: string): void {
  process.stdout.write(`    ${text}\n`);
}

/** `podman …` through the runtime wrapper; resolves with stdout, rejects with stderr's tail. */
export async function podman(
  args: string[],
  { allowFailure = false } = {},
): Promise<{ stdout: string; code: number }> {
  try {
    const { stdout } = await execFileP('podman', ['--runtime', RUNTIME, ...args], { maxBuffer: 64 << 20 });
    return { stdout, code: 0 };
  } catch (err) {
    const e = err as { code?: number; stderr?: string; stdout?: string };
    if (allowFailure) return { stdout: e.stdout ?? '', code: typeof e.code === 'number' ? e.code : 1 };
    throw new Error(
      `podman ${args.join(' ')} failed (exit ${e.code}): ${(e.stderr ?? '').trim().slice(-2000)}`,
    );
  }
}

/** A long command whose output goes to a log file; on failure its last lines are printed. */
export async function logged(command: string, args: string[], log: string, env = process.env): Promise<void> {
  const fd = openSync(log, 'w');
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', fd, fd] });
      child.on('error', reject);
      child.on('exit', resolve);
    });
    if (code !== 0) {
      const tail = readFileSync(log, 'utf8').split('\n').slice(-40).join('\n');
      throw new Error(`${command} ${args.join(' ')} failed (exit ${code}); last lines of ${log}:\n${tail}`);
    }
  } finally {
    closeSync(fd);
  }
}

export async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

export interface Answer {
  status: number;
  body: string;
  json: () => Record<string, unknown>;
}

export async function http(method: string, url: string, key?: string, body?: unknown): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, body: text, json: () => JSON.parse(text) as Record<string, unknown> };
}

export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${WAIT_MS / 1000} s`);
    await sleep(everyMs);
  }
}

/**
 * Runs the image detached with host networking, labelled for clean-up. `readOnly`: a read-only
 * root file system with tmpfs on /tmp, as the Kubernetes example runs its pods.
 */
export async function runContainer(
  name: string,
  env: Record<string, string>,
  mounts: string[],
  args: string[],
  { readOnly = false } = {},
) {
  await podman([
    'run',
    '--detach',
    ...(readOnly ? ['--read-only', '--read-only-tmpfs'] : []),
    '--name',
    name,
    '--label',
    LABEL,
    '--network',
    'host',
    ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
    ...mounts.flatMap((m) => ['--volume', m]),
    IMAGE,
    ...args,
  ]);
  cleanups.push(
    async () =>
      void (await podman(['rm', '--force', '--volumes', '--time', '0', name], { allowFailure: true })),
  );
}

/** The container's output: podman logs writes its stdout and stderr to its own, both wanted. */
export async function logs(name: string): Promise<string> {
  return new Promise((resolve) => {
    execFile('podman', ['logs', name], { maxBuffer: 64 << 20 }, (_err, out, errOut) =>
      resolve(`${out}${errOut}`),
    );
  });
}

export async function waitReady(base: string, name: string): Promise<void> {
  await waitFor(`${name} ready`, async () => {
    const state = (await podman(['inspect', name, '--format', '{{.State.Status}}'])).stdout.trim();
    if (state === 'exited') throw new Error(`${name} exited:\n${await logs(name)}`);
    // Connection refused until it listens.
    const answer = await http('GET', `${base}/readyz`).catch(() => null);
    return answer?.status === 200 ? true : undefined;
  }).catch(async (err: Error) => {
    throw new Error(`${err.message}\n${name} logs:\n${await logs(name)}`);
  });
}

/** Every process of the container runs as the image's user, seen from the host and inside. */
export async function assertNonRoot(name: string): Promise<void> {
  const { stdout } = await podman(['top', name, 'huser', 'user', 'args']);
  const rows = stdout
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/));
  assert.ok(rows.length >= 2, `expected tini and node in ${name}:\n${stdout}`);
  for (const [hostUser, user, ...args] of rows) {
    assert.equal(hostUser, String(IMAGE_UID), `host user of ${args.join(' ')}`);
    assert.ok(user === 'mailverdict' || user === String(IMAGE_UID), `user ${user} of ${args.join(' ')}`);
  }
  assert.match(rows[0]!.slice(2).join(' '), /tini/, 'PID 1 is tini');
  note(
    `${rows.length} processes, all uid ${IMAGE_UID}: ${rows.map((r) => r.slice(2, 4).join(' ')).join(' | ')}`,
  );
}

/** SIGTERM (the image's STOPSIGNAL) and a 30 s grace; the process must exit 0 on its own. */
export async function stopGracefully(name: string): Promise<void> {
  await podman(['stop', '--time', '30', name]);
  const code = (await podman(['inspect', name, '--format', '{{.State.ExitCode}}'])).stdout.trim();
  assert.equal(code, '0', `${name} exit code after SIGTERM (137 would be SIGKILL after the grace)`);
}
