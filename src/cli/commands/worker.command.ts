/**
 * `mailverdict worker`: the batch workers alone, without the HTTP API, on the store of
 * `--data-dir` (chunks, webhook and e-mail deliveries, the retention sweep). Run `serve
 * --no-embedded-workers` plus any number of these to scale out. SIGTERM/SIGINT: stop claiming,
 * hand unfinished chunks back, close the store.
 */
import type { Command } from 'commander';

import { createRuntime, startEmbeddedWorkers } from '../../runtime.js';
import { startupWarnings } from '../../services/prober/doctor.service.js';
import { addCommonOptions, waitForSignal, loadProberConfig } from '../cli-support.js';
import { boundHeapGrowth } from '../heap-growth.js';

export function registerWorkerCommand(program: Command): void {
  addCommonOptions(
    program
      .command('worker')
      .description('Run batch workers alone (no HTTP API) on the data directory’s store.'),
  ).action(async (options: Record<string, unknown>) => {
    await runWorker(options);
  });
}

async function runWorker(options: Record<string, unknown>): Promise<void> {
  boundHeapGrowth();
  const config = await loadProberConfig(options);
  const runtime = await createRuntime(config);
  // The offline part of `mailverdict doctor`: warned about, never a reason not to start.
  for (const warning of startupWarnings(config.engine.smtp)) runtime.ctx.logger.warn(warning);
  // The reputation guard: blocklist re-checks and the shared egress states (docs/prober.md).
  runtime.guard.start();
  runtime.dnsTrust.start();
  try {
    // A standalone worker is one of several processes on the store by design.
    const background = startEmbeddedWorkers(runtime.ctx, {
      coordination: runtime.coordination,
      guard: runtime.guard,
      storeShared: true,
      kind: 'worker',
    });
    process.stdout.write(
      options.json === true
        ? `${JSON.stringify({ event: 'worker_started', worker: background.worker.id, data_dir: config.dataDir })}\n`
        : `mailverdict worker ${background.worker.id} running (data in ${config.dataDir})\n`,
    );
    const signal = await waitForSignal();
    runtime.ctx.logger.info({ signal }, 'worker shutting down: handing back unfinished chunks');
    await background.stop();
  } finally {
    await runtime.close();
  }
}
