/**
 * `mailverdict serve`: the HTTP API (and, in the embedded mode, the batch workers) in one
 * process. On a brand-new data directory it creates an account and prints a live and a test
 * key and the owner's invitation link to the dashboard, once. SIGTERM/SIGINT: stop accepting, finish in-flight requests, close the store.
 */
import type { Command } from 'commander';

import { createRuntime, startServer } from '../../runtime.js';
import { startEmbeddedWorkers } from '../../jobs/embedded.js';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createMetrics } from '../../api/metrics.js';
import { createJobMetrics } from '../../jobs/job-metrics.js';
import { join } from 'node:path';
import { bootstrapFirstAccount, type Bootstrap } from '../../services/bootstrap.service.js';
import { memberLink } from '../../services/members.service.js';
import { startupWarnings } from '../../services/doctor.service.js';
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
function ownerLink(b: Bootstrap, publicBaseUrl: string): string {
  return memberLink(publicBaseUrl, 'invitation', b.owner.token);
}

function bootstrapText(b: Bootstrap, url: string, publicBaseUrl: string): string {
  return [
    `Created account ${b.account.id} with two API keys. They are shown this once; store them now.`,
    `  live key (real verifications, counted): ${b.live.key}`,
    `  test key (fixed results, not counted):  ${b.test.key}`,
    `Dashboard: ${b.owner.email} sets a password and signs in at this link (once, until ${b.owner.expiresAt}):`,
    `  ${ownerLink(b, publicBaseUrl)}`,
    'Try it:',
    `  curl -s ${url}/v1/verify -H 'Authorization: Bearer ${b.test.key}' \\`,
    `    -H 'Content-Type: application/json' -d '{"email":"anna@valid.example.com"}'`,
    '',
  ].join('\n');
}

/** Where `serve` leaves the bootstrap keys when its output is not a terminal. */
export const BOOTSTRAP_KEYS_FILE = 'bootstrap-keys.json';

/**
 * Keys are secrets: printed only to a terminal, where a person reads them once. Under a process
 * manager stdout ends in log files, so there they go once into a file only the owner can read
 * (0600, never overwritten), and the output and the log name the file instead.
 */
function keysDestination(
  b: Bootstrap,
  dataDir: string,
  toTerminal: boolean,
  publicBaseUrl: string,
): string | null {
  if (toTerminal) return null;
  const path = join(dataDir, BOOTSTRAP_KEYS_FILE);
  // On PostgreSQL nothing else lives in the data directory, which may not exist yet.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(path, keysFileBody(b, publicBaseUrl), { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return path;
}

function keysFileBody(b: Bootstrap, publicBaseUrl: string): string {
  const body = {
    account_id: b.account.id,
    live_key: b.live.key,
    test_key: b.test.key,
    owner_email: b.owner.email,
    owner_invitation_link: ownerLink(b, publicBaseUrl),
    owner_invitation_expires_at: b.owner.expiresAt,
    note: 'Shown this once. Store the keys in a secret manager, open the invitation link, then delete this file.',
  };
  return `${JSON.stringify(body, null, 2)}\n`;
}

function bootstrapFileText(b: Bootstrap, path: string): string {
  return [
    `Created account ${b.account.id} with two API keys and the owner's dashboard invitation. Output is not`,
    `a terminal, so they were written once to ${path} (readable only by its owner). Store them, then delete the file.`,
    '',
  ].join('\n');
}

async function runServe(options: Record<string, unknown>): Promise<void> {
  boundHeapGrowth();
  const json = options.json === true;
  const config = await loadProberConfig(options);
  const runtime = await createRuntime(config);
  const { ctx } = runtime;
  // The offline part of `mailverdict doctor`: warned about, never a reason not to start.
  for (const warning of startupWarnings(config.engine.smtp)) ctx.logger.warn(warning);
  // The reputation guard: blocklist re-checks and the shared egress states (docs/prober.md).
  runtime.guard.start();
  runtime.dnsTrust.start();
  try {
    const bootstrap =
      config.bootstrap && runtime.freshStore ? await bootstrapFirstAccount(ctx.db, ctx.clock) : null;
    // Before anything listens: a keys file that cannot be written stops start-up cleanly.
    const keysFile = bootstrap
      ? keysDestination(bootstrap, config.dataDir, process.stdout.isTTY === true, config.publicBaseUrl)
      : null;
    if (keysFile !== null)
      ctx.logger.info({ path: keysFile }, 'bootstrap API keys written to a file readable only by its owner');
    const metrics = createMetrics({ processMetrics: true });
    const jobMetrics = createJobMetrics(metrics.registry, ctx.db, ctx.clock);
    const server = await startServer(runtime, { metrics });
    let background: ReturnType<typeof startEmbeddedWorkers> | null = null;
    try {
      // Batch jobs (src/jobs/embedded.ts): workers, deliveries and the retention sweep in this process.
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
      // Written before listening, the file's link named port 0: now that the port is known, mend it.
      if (bootstrap && keysFile !== null && publicBaseUrl !== config.publicBaseUrl)
        writeFileSync(keysFile, keysFileBody(bootstrap, publicBaseUrl), { mode: 0o600 });
      const keysOut = (b: Bootstrap) =>
        keysFile === null
          ? {
              live_key: b.live.key,
              test_key: b.test.key,
              owner_invitation_link: ownerLink(b, publicBaseUrl),
            }
          : { keys_file: keysFile };
      const out = json
        ? `${JSON.stringify({
            event: 'listening',
            url: server.url,
            data_dir: config.dataDir,
            ...(bootstrap ? { account_id: bootstrap.account.id, ...keysOut(bootstrap) } : {}),
          })}\n`
        : `${bootstrap ? (keysFile === null ? bootstrapText(bootstrap, server.url, publicBaseUrl) : bootstrapFileText(bootstrap, keysFile)) : ''}mailverdict listening on ${server.url} (data in ${config.dataDir})\n`;
      process.stdout.write(out);

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
