/**
 * `mailverdict worker` processes in the operator console's health (docs/operators.md, "Service
 * health"): a worker shows while idle, with its kind, host and pid; one killed without a clean
 * stop is counted lost once silent for the lease (three beats); one stopped with SIGTERM is
 * neither listed nor lost; one that finished chunks shows how many once idle, and writes the count
 * at its clean stop. A short `MAILVERDICT_WORKER_LEASE` keeps the beats short.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { intakeAll } from '../../src/services/batches/batch-intake.js';
import { submitBatch } from '../../src/services/batches/batch.service.js';
import { plansFromConfig } from '../../src/services/usage/plans.js';
import { serviceHealth, type ServiceHealth } from '../../src/services/operators/service-health.service.js';
import { systemResolver } from '../../src/services/webhooks/ssrf.js';
import { getJob } from '../../src/store/job.store.js';
import { cleanEnv, killAll, spawnMailverdict, type RunningCommand } from '../kit/cli.js';
import { waitFor } from '../kit/wait-for.js';
import { TRUST_OFF } from '../../src/engine/dns/resolver-trust.js';

const LEASE_MS = 900;
const dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-worker-presence-'));
let runtime: Runtime;

beforeAll(async () => {
  // Creates and migrates the store before any worker opens it.
  runtime = await createRuntime(loadConfig({ dataDir }, {}), { logger: pino({ level: 'silent' }) });
});
afterAll(async () => {
  killAll();
  await runtime.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const health = (): Promise<ServiceHealth['workers']> =>
  serviceHealth({
    db: runtime.ctx.db,
    clock: systemClock,
    leaseMs: LEASE_MS,
    dnsTrust: () => TRUST_OFF.status(),
  }).then((h) => h.workers);

function startWorker(): Promise<RunningCommand> {
  return spawnMailverdict(['worker', '--data-dir', dataDir], {
    env: cleanEnv({
      MAILVERDICT_LOG_LEVEL: 'warn',
      MAILVERDICT_WORKER_LEASE: `${LEASE_MS}ms`,
      MAILVERDICT_WORKER_POLL_INTERVAL: '100ms',
    }),
    stderr: 'pipe',
  });
}

async function liveOne(id: string): Promise<ServiceHealth['workers']['live'][number]> {
  return waitFor(
    `worker ${id} in the health`,
    async () => (await health()).live.find((w) => w.worker_id === id),
    20_000,
    50,
  );
}

describe('mailverdict worker in the service health', () => {
  it('shows an idle worker, and counts it lost once killed without a clean stop', async () => {
    const worker = await startWorker();
    const id = worker.first.worker!;
    expect(await liveOne(id)).toMatchObject({
      kind: 'worker',
      host: hostname(),
      pid: worker.child.pid,
      chunks: 0,
    });
    // Still live after several beats: the timer beats, not only the start.
    await new Promise((r) => setTimeout(r, 2 * LEASE_MS));
    expect((await health()).live.map((w) => w.worker_id)).toContain(id);

    const lostBefore = (await health()).lost_24h;
    await worker.stop({ signal: 'SIGKILL' });
    const after = await waitFor(
      'the killed worker counted lost',
      async () => {
        const h = await health();
        return h.lost_24h > lostBefore ? h : undefined;
      },
      10_000,
      100,
    );
    expect(after.live.map((w) => w.worker_id)).not.toContain(id);
    expect(after.lost_24h).toBe(lostBefore + 1);
  });

  it('forgets a worker stopped with SIGTERM at once: neither live nor lost', async () => {
    const worker = await startWorker();
    const id = worker.first.worker!;
    await liveOne(id);
    const lostBefore = (await health()).lost_24h;
    expect((await worker.stop()).code).toBe(0);
    const row = await runtime.ctx.db
      .selectFrom('workers')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    expect(row?.stopped_at).not.toBeNull();
    const now = await health();
    expect(now.live.map((w) => w.worker_id)).not.toContain(id);
    await new Promise((r) => setTimeout(r, 2 * LEASE_MS));
    expect((await health()).lost_24h).toBe(lostBefore);
  });

  it('shows the chunks an idle worker finished since it started, and writes the count at its clean stop', async () => {
    const config = loadConfig({ dataDir, chunkSize: '10' }, {});
    const { db, clock } = runtime.ctx;
    const account = await createAccount(db, clock, { email: 'done@example.org' });
    const { submission } = await submitBatch(
      { db, clock, config, plans: plansFromConfig(config), resolveHost: systemResolver, usageCache: null },
      {
        accountId: account.id,
        mode: 'test',
        request: {
          addresses: intakeAll(
            Array.from({ length: 25 }, (_, i) => `u${i}@valid.example.com`),
            config.batch.chunkSize,
          ),
          webhookUrl: null,
          notifyEmail: false,
        },
        idempotencyKey: null,
      },
    );
    const worker = await startWorker();
    const id = worker.first.worker!;
    await waitFor(
      'the job completed',
      async () => ((await getJob(db, submission.job_id))?.status === 'completed' ? true : undefined),
      20_000,
      50,
    );
    // The beat after the last chunk carries the count: three chunks of ten, idle again.
    const idle = await waitFor(
      'an idle beat with the chunks done',
      async () => {
        const w = (await health()).live.find((l) => l.worker_id === id);
        return w?.chunks === 0 && w.chunks_done === 3 ? w : undefined;
      },
      20_000,
      50,
    );
    expect(idle).toMatchObject({ kind: 'worker', chunks: 0, chunks_done: 3 });
    expect((await worker.stop()).code).toBe(0);
    const row = await db.selectFrom('workers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ chunks_done: 3, stopped_at: expect.any(String) });
  });
});
