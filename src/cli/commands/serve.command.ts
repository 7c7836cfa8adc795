/**
 * `mailverdict serve`: the HTTP API (and, in the embedded mode, the batch workers) in one
 * process. On a brand-new data directory it creates an account and prints a live and a test
 * key, once. SIGTERM/SIGINT: stop accepting, finish in-flight requests, close the store.
 */
import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { createRuntime, startServer } from '../../runtime.js';
import { startEmbeddedWorkers } from '../../jobs/embedded.js';
import { bootstrapFirstAccount, type Bootstrap } from '../../services/bootstrap.service.js';
import { addSettingsOptions, settingsFlags, waitForSignal } from '../cli-support.js';

export function registerServeCommand(program: Command): void {
  addSettingsOptions(program.command('serve').description('Start the HTTP API.')).action(
    async (options: Record<string, unknown>) => {
      await runServe(options);
    },
  );
}

function bootstrapText(b: Bootstrap, url: string): string {
  return [
    `Created account ${b.account.id} with two API keys. They are shown this once; store them now.`,
    `  live key (real verifications, counted): ${b.live.key}`,
    `  test key (fixed results, not counted):  ${b.test.key}`,
    'Try it:',
    `  curl -s ${url}/v1/verify -H 'Authorization: Bearer ${b.test.key}' \\`,
    `    -H 'Content-Type: application/json' -d '{"email":"anna@valid.example.com"}'`,
    '',
  ].join('\n');
}

async function runServe(options: Record<string, unknown>): Promise<void> {
  const json = options.json === true;
  const config = loadConfig(settingsFlags(options));
  const runtime = await createRuntime(config);
  const { ctx } = runtime;
  try {
    const bootstrap =
      config.bootstrap && runtime.freshDataDir ? await bootstrapFirstAccount(ctx.db, ctx.clock) : null;
    const server = await startServer(runtime);
    // Batch jobs (src/jobs/embedded.ts): workers, deliveries and the retention sweep in this process.
    const background = config.batch.embeddedWorkers ? startEmbeddedWorkers(ctx) : null;
    const out = json
      ? `${JSON.stringify({
          event: 'listening',
          url: server.url,
          data_dir: config.dataDir,
          ...(bootstrap
            ? { account_id: bootstrap.account.id, live_key: bootstrap.live.key, test_key: bootstrap.test.key }
            : {}),
        })}\n`
      : `${bootstrap ? bootstrapText(bootstrap, server.url) : ''}mailverdict listening on ${server.url} (data in ${config.dataDir})\n`;
    process.stdout.write(out);

    const signal = await waitForSignal();
    ctx.logger.info({ signal }, 'shutting down: finishing in-flight requests');
    await background?.stop();
    await server.close();
  } finally {
    await runtime.close();
  }
}
