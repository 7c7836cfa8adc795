/**
 * `mailverdict worker` as a process of its own: it completes a job queued in the store of its
 * --data-dir, and exits cleanly on SIGTERM.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createRuntime } from '../../src/runtime.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { submitBatch } from '../../src/services/batches/batch.service.js';
import { intakeAll } from '../../src/services/batches/batch-intake.js';
import { plansFromConfig } from '../../src/services/usage/plans.js';
import { systemResolver } from '../../src/services/webhooks/ssrf.js';
import { getJob } from '../../src/store/job.store.js';
import { cleanEnv, spawnMailverdict } from '../kit/cli.js';

const dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-worker-cmd-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('mailverdict worker', () => {
  it('completes a queued job and exits 0 on SIGTERM', async () => {
    const config = loadConfig({ dataDir, chunkSize: '10' }, {});
    const runtime = await createRuntime(config, { logger: pino({ level: 'silent' }) });
    const { ctx } = runtime;
    let jobId: string;
    try {
      const account = await createAccount(ctx.db, ctx.clock, { email: 'w@example.org' });
      const { submission } = await submitBatch(
        {
          db: ctx.db,
          clock: ctx.clock,
          config,
          plans: plansFromConfig(config),
          resolveHost: systemResolver,
          usageCache: null,
        },
        {
          accountId: account.id,
          mode: 'test',
          request: {
            addresses: intakeAll(
              Array.from({ length: 55 }, (_, i) => `u${i}@valid.example.com`),
              config.batch.chunkSize,
            ),
            webhookUrl: null,
            notifyEmail: false,
          },
          idempotencyKey: null,
        },
      );
      jobId = submission.job_id;
    } finally {
      await runtime.close();
    }

    const worker = await spawnMailverdict(['worker', '--data-dir', dataDir], {
      env: cleanEnv({ MAILVERDICT_LOG_LEVEL: 'warn', MAILVERDICT_WORKER_POLL_INTERVAL: '100ms' }),
      stderr: 'inherit',
    });
    const child = worker.child;
    const started = worker.first;
    expect(started).toMatchObject({ event: 'worker_started', worker: expect.stringMatching(/^wkr_/) });

    const check = await createRuntime(loadConfig({ dataDir }, {}), { logger: pino({ level: 'silent' }) });
    try {
      let status = 'queued';
      const deadline = Date.now() + 20_000;
      while (status !== 'completed' && Date.now() < deadline) {
        await sleep(100);
        status = (await getJob(check.ctx.db, jobId))?.status ?? 'missing';
      }
      expect(status).toBe('completed');
      expect((await getJob(check.ctx.db, jobId))?.processed).toBe(55);
    } finally {
      await check.close();
    }

    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });
});
