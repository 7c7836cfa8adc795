/**
 * `mailverdict serve`: the HTTP API (and, in the embedded mode, the batch workers) in one
 * process. Once it listens on a store without an account, it creates the operator's account and
 * prints a live and a test key and the owner's invitation link to the dashboard, once (or writes
 * them to a file when its output is not a terminal); a start that failed before showing them is
 * completed by the next one (services/accounts/bootstrap.service.ts). SIGTERM/SIGINT: stop accepting,
 * finish in-flight requests, close the store.
 */
import type { Command } from 'commander';

import { ConfigError, type Config } from '../../config.js';

import { createRuntime, startEmbeddedWorkers, startServer } from '../../runtime.js';
import { chmodSync, existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { createMetrics } from '../../api/metrics.js';
import { createJobMetrics } from '../../jobs/job-metrics.js';
import { join } from 'node:path';
import {
  bootstrapDelivered,
  bootstrapFirstAccount,
  type Bootstrap,
} from '../../services/accounts/bootstrap.service.js';
import { memberLink } from '../../services/people/members.service.js';
import { setPasswordHashCost } from '../../services/people/passwords.js';
import { PASSWORD_HASH_COST } from '../../config.js';
import { startupWarnings } from '../../services/prober/doctor.service.js';
import { addCommonOptions, waitForSignal, loadProberConfig } from '../cli-support.js';
import { boundHeapGrowth } from '../heap-growth.js';

export function registerServeCommand(program: Command): void {
  addCommonOptions(program.command('serve').description('Start the HTTP API.')).action(
    async (options: Record<string, unknown>) => {
      await runServe(options);
    },
  );
}

/** The owner's invitation to the dashboard, on the public base URL (docs/dashboard.md). */
function ownerLink(b: Bootstrap, publicBaseUrl: string): string | null {
  return b.owner === null ? null : memberLink(publicBaseUrl, 'invitation', b.owner.token);
}

function bootstrapHeadline(b: Bootstrap): string {
  return b.completed
    ? `An earlier start made account ${b.account.id} and stopped before showing its keys: here are new ones (the unshown ones are revoked).`
    : `Created account ${b.account.id} with two API keys.`;
}

function ownerText(b: Bootstrap, publicBaseUrl: string): string[] {
  if (b.owner === null)
    return [`Dashboard: ${b.account.email} has set a password already and signs in at ${publicBaseUrl}/`];
  return [
    `Dashboard: ${b.owner.email} sets a password and signs in at this link (once, until ${b.owner.expiresAt}):`,
    `  ${ownerLink(b, publicBaseUrl)}`,
  ];
}

function bootstrapText(b: Bootstrap, url: string, publicBaseUrl: string): string {
  return [
    `${bootstrapHeadline(b)} They are shown this once; store them now.`,
    `  live key (real verifications, counted): ${b.live.key}`,
    `  test key (fixed results, not counted):  ${b.test.key}`,
    ...ownerText(b, publicBaseUrl),
    'Try it:',
    `  curl -s ${url}/v1/verify -H 'Authorization: Bearer ${b.test.key}' \\`,
    `    -H 'Content-Type: application/json' -d '{"email":"anna@valid.example.com"}'`,
    '',
  ].join('\n');
}

/** Where `serve` leaves the bootstrap keys when its output is not a terminal. */
export const BOOTSTRAP_KEYS_FILE = 'bootstrap-keys.json';

/**
 * Whether the bootstrap keys are printed: only to a terminal, where a person reads them once.
 * Under a process manager stdout ends in log files, so there they go into a file instead.
 */
export function keysGoToTerminal(stdout: { isTTY?: boolean }): boolean {
  return stdout.isTTY === true;
}

/**
 * Writes the keys once into a file only the owner can read (0600). A file left by an earlier
 * start of the same bootstrap holds keys that are revoked now and is replaced; any other file is
 * never overwritten (it may hold the only copy of another store's keys).
 */
function writeKeysFile(b: Bootstrap, dataDir: string, publicBaseUrl: string): string {
  const path = join(dataDir, BOOTSTRAP_KEYS_FILE);
  // On PostgreSQL nothing else lives in the data directory, which may not exist yet.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (existsSync(path)) {
    if (keysFileAccount(path) !== b.account.id)
      throw new Error(
        `${path} exists and holds the keys of another store; move it away and start again ` +
          "(the next start shows this account's keys)",
      );
    unlinkSync(path);
  }
  writeFileSync(path, keysFileBody(b, publicBaseUrl), { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return path;
}

function keysFileAccount(path: string): string | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { account_id?: unknown };
    return typeof parsed.account_id === 'string' ? parsed.account_id : null;
  } catch {
    return null;
  }
}

function keysFileBody(b: Bootstrap, publicBaseUrl: string): string {
  const body = {
    account_id: b.account.id,
    live_key: b.live.key,
    test_key: b.test.key,
    owner_email: b.account.email,
    owner_invitation_link: ownerLink(b, publicBaseUrl),
    owner_invitation_expires_at: b.owner?.expiresAt ?? null,
    note: 'Shown this once. Store the keys in a secret manager, open the invitation link, then delete this file.',
  };
  return `${JSON.stringify(body, null, 2)}\n`;
}

function bootstrapFileText(b: Bootstrap, path: string): string {
  return [
    `${bootstrapHeadline(b)} Output is not a terminal, so the keys and the owner's dashboard invitation`,
    `were written once to ${path} (readable only by its owner). Store them, then delete the file.`,
    '',
  ].join('\n');
}

function portInUse(err: unknown): boolean {
  return err instanceof Error && (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
}

function portInUseMessage(config: Readonly<Config>): string {
  return (
    `cannot listen on ${config.host}:${config.port}: another process uses that port. Start on another ` +
    'port with --port N (or MAILVERDICT_PORT=N). Nothing is created before the server listens.'
  );
}

async function runServe(options: Record<string, unknown>): Promise<void> {
  boundHeapGrowth();
  const json = options.json === true;
  const config = await loadProberConfig(options);
  setPasswordHashCost(config.passwordHashCost);
  const runtime = await createRuntime(config);
  const { ctx } = runtime;
  if (config.passwordHashCost < PASSWORD_HASH_COST.default)
    ctx.logger.warn(
      { passwordHashCost: config.passwordHashCost },
      `password hashes are made below the default cost (${PASSWORD_HASH_COST.default}): for test suites only`,
    );
  // The offline part of `mailverdict doctor`: warned about, never a reason not to start.
  for (const warning of startupWarnings(config.engine.smtp)) ctx.logger.warn(warning);
  // The reputation guard: blocklist re-checks and the shared egress states (docs/prober.md).
  runtime.guard.start();
  runtime.dnsTrust.start();
  try {
    const metrics = createMetrics({ processMetrics: true });
    const jobMetrics = createJobMetrics(metrics.registry, ctx.db, ctx.clock);
    // Listening first: a port in use stops the start before anything is created (issue 25).
    const server = await startServer(runtime, { metrics }).catch((err: unknown) => {
      throw portInUse(err) ? new ConfigError(portInUseMessage(config)) : err;
    });
    let background: ReturnType<typeof startEmbeddedWorkers> | null = null;
    try {
      // Batch jobs (runtime.ts startEmbeddedWorkers, run by src/jobs/embedded.ts): workers, deliveries and the retention sweep in this process.
      background = config.batch.embeddedWorkers
        ? startEmbeddedWorkers(ctx, {
            metrics: jobMetrics,
            coordination: runtime.coordination,
            guard: runtime.guard,
            // On a database URL, other API and worker processes may well share the store.
            storeShared: config.databaseUrl !== null,
          })
        : null;
      // The default base URL names the port asked for; with port 0 only the listening one is right.
      const publicBaseUrl = config.publicBaseUrl.endsWith(':0') ? server.url : config.publicBaseUrl;
      // A new account, or the completion of one whose keys an earlier start never showed.
      const bootstrap = config.bootstrap
        ? await bootstrapFirstAccount(ctx.db, ctx.clock, { plan: config.bootstrapPlan })
        : null;
      const keysFile =
        bootstrap && !keysGoToTerminal(process.stdout)
          ? writeKeysFile(bootstrap, config.dataDir, publicBaseUrl)
          : null;
      if (keysFile !== null)
        ctx.logger.info(
          { path: keysFile },
          'bootstrap API keys written to a file readable only by its owner',
        );
      const keysOut = (b: Bootstrap) =>
        keysFile === null
          ? { live_key: b.live.key, test_key: b.test.key, owner_invitation_link: ownerLink(b, publicBaseUrl) }
          : { keys_file: keysFile };
      const out = json
        ? `${JSON.stringify({
            event: 'listening',
            url: server.url,
            ...(server.metricsUrl === null ? {} : { metrics_url: server.metricsUrl }),
            data_dir: config.dataDir,
            ...(bootstrap
              ? {
                  account_id: bootstrap.account.id,
                  bootstrap_completed: bootstrap.completed,
                  ...keysOut(bootstrap),
                }
              : {}),
          })}\n`
        : `${bootstrap ? (keysFile === null ? bootstrapText(bootstrap, server.url, publicBaseUrl) : bootstrapFileText(bootstrap, keysFile)) : ''}mailverdict listening on ${server.url}${server.metricsUrl === null ? '' : `, /metrics on ${server.metricsUrl}`} (data in ${config.dataDir})\n`;
      process.stdout.write(out);
      // Shown or written: from now on no start replaces these keys.
      if (bootstrap)
        await bootstrapDelivered(ctx.db, ctx.clock, bootstrap, keysFile === null ? 'terminal' : 'file');

      const signal = await waitForSignal();
      ctx.logger.info({ signal }, 'shutting down: finishing in-flight requests');
    } finally {
      // Also on a failure after listening: a process that cannot serve must not stay up half-open.
      await background?.stop();
      await server.close();
    }
  } finally {
    await runtime.close();
  }
}
