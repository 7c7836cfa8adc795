/**
 * Workers start on new work when the store announces it, not at their next poll: each worker here
 * polls once an hour, so a chunk started within the test's time was started by the announcement
 * (no measured duration is compared; the latency itself is measured by the benchmark). On PostgreSQL the submission comes from another
 * process (its own Kysely instance); SQLite announces only this process's own submissions.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SECOND, systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import type { ChunkVerifier } from '../../src/services/batches/chunk-verifier.js';
import { createWorker } from '../../src/jobs/worker.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { intakeAll } from '../../src/services/batches/batch-intake.js';
import { submitBatch } from '../../src/services/batches/batch.service.js';
import { resolvePlans } from '../../src/services/usage/plans.js';
import { storeBackend } from '../../src/store/backend.js';
import type { Database } from '../../src/store/schema.js';
import { openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';

const POLL_INTERVAL = 3600 * SECOND;
/** Generous for a loaded two-core machine, and far below the poll interval. */
const BOUND_MS = 30 * SECOND;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

/** Polls `ready` every few ms until true; fails after `ms`. */
async function until(ready: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(2);
  }
}

describe.each(testBackends())('worker wake-up on %s', (backend) => {
  let store: TestStore;
  let accountId: string;

  async function open(): Promise<void> {
    store = await openTestStore(backend);
    closers.push(() => store.close());
    accountId = (await createAccount(store.db, systemClock, { email: 'w@example.org' })).id;
  }

  const config = () =>
    loadConfig(
      { dataDir: store.dir, pollInterval: `${POLL_INTERVAL}ms`, chunkSize: '10', chunkConcurrency: '1' },
      {},
    );

  /**
   * A worker on `db` whose verifier records when it starts a chunk; resolved once it is idle
   * (its first claim came back empty) and the store's announcements can reach it.
   */
  async function idleWorker(db: Kysely<Database>, verify?: ChunkVerifier) {
    let claims = 0;
    const counted = db.withPlugin({
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        claims++;
        return args.result;
      },
    });
    const started: number[] = [];
    const worker = createWorker({
      db: counted,
      clock: systemClock,
      config: config(),
      logger: pino({ level: 'silent' }),
      verifyChunk: async (job, emails, signal, repeats) => {
        started.push(performance.now());
        if (verify) return verify(job, emails, signal, repeats);
        return emails.map(() => ({
          status: 'deliverable' as const,
          score: 1,
          reason: null,
          valid: true,
          provider: null,
        }));
      },
    });
    worker.start();
    closers.push(() => worker.stop());
    await until(() => claims > 0, 'the first poll');
    // PostgreSQL: the listening connection is up (the change token is null until it LISTENs).
    await until(() => storeBackend(db).changes.changeToken() !== null, 'the listener');
    return { worker, started };
  }

  async function submit(db: Kysely<Database>, n = 5): Promise<void> {
    await submitBatch(
      {
        db,
        clock: systemClock,
        config: config(),
        plans: resolvePlans({}),
        resolveHost: () => Promise.reject(new Error('no webhook here')),
        usageCache: null,
      },
      {
        accountId,
        mode: 'test',
        request: {
          addresses: intakeAll(
            Array.from({ length: n }, (_, i) => `a${i}@example.com`),
            10,
          ),
          webhookUrl: null,
          notifyEmail: false,
        },
        idempotencyKey: null,
      },
    );
  }

  it('starts a job submitted after it went idle long before its next poll', async () => {
    await open();
    const { started } = await idleWorker(store.db);
    // PostgreSQL: another process submits; SQLite: this one (an embedded worker).
    const submitter = backend === 'postgres' ? await store.openAnother() : store.db;
    await submit(submitter);
    await until(() => started.length > 0, 'the chunk to start', BOUND_MS);
    expect(started).toHaveLength(1);
  });

  if (backend !== 'postgres')
    console.log(
      'wake-up.test.ts: "resumes a handed-back chunk" runs on PostgreSQL only (a hand-back notifies other processes there; SQLite workers poll)',
    );
  it.skipIf(backend !== 'postgres')(
    'resumes at once a chunk that a stopping worker of another process handed back',
    async () => {
      await open();
      const other = await store.openAnother();
      // The first worker holds its chunk until it is stopped.
      const stopping = await idleWorker(other, (_job, _emails, signal) => {
        return new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(new Error('aborted')));
        });
      });
      await submit(store.db);
      await until(() => stopping.started.length > 0, 'the first worker to take the chunk');
      const { started } = await idleWorker(store.db);
      await stopping.worker.stop();
      await until(() => started.length > 0, 'the chunk to be resumed', BOUND_MS);
      expect(started).toHaveLength(1);
    },
  );
});
