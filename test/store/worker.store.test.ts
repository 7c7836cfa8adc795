/**
 * The worker processes' rows on every backend (docs/operators.md, "Service health"): a worker
 * registers at start and beats on a timer; the health panel lists it live while it beat within the
 * lease, idle or busy, counts one that went silent without a clean stop as lost, and forgets one
 * that stopped cleanly; the retention sweep deletes rows not seen for a day.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DAY, HOUR, ManualClock, SECOND } from '../../src/clock.js';
import { sweepOnce } from '../../src/jobs/sweep.js';
import { heartbeatEvery, startWorkerPresence } from '../../src/jobs/worker-presence.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { serviceHealth } from '../../src/services/operators/service-health.service.js';
import { claimChunk } from '../../src/store/chunk.store.js';
import { beatWorker, registerWorker, stopWorker } from '../../src/store/worker.store.js';
import { waitFor } from '../kit/wait-for.js';
import { insertProcessingJob, openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';
import { TRUST_OFF } from '../../src/engine/dns/resolver-trust.js';

const LEASE = 30 * SECOND;
const logger = pino({ level: 'silent' });

describe.each(testBackends())('worker rows on %s', (backend) => {
  let store: TestStore;
  let clock: ManualClock;
  beforeEach(async () => {
    store = await openTestStore(backend);
    clock = new ManualClock('2026-03-10T12:00:00.000Z');
  });
  afterEach(async () => {
    await store.close();
  });

  async function queuedJob(): Promise<string> {
    const account = await createAccount(store.db, clock, { email: 'w@example.org' });
    const now = clock.now().toISOString();
    await insertProcessingJob(store.db, { id: 'job_1', accountId: account.id, now, chunks: 1 });
    return 'job_1';
  }

  const health = () =>
    serviceHealth({ db: store.db, clock, leaseMs: LEASE, dnsTrust: () => TRUST_OFF.status() });
  const register = (id: string, kind: 'embedded' | 'worker' = 'worker') =>
    registerWorker(store.db, {
      id,
      kind,
      host: 'node-1',
      pid: 4242,
      version: '0.1.0',
      started_at: clock.now().toISOString(),
      chunks_done: 0,
    });

  it('lists a registered idle worker as live with its kind, host, pid, start and last heartbeat', async () => {
    const started = clock.now().toISOString();
    await register('wkr_idle', 'embedded');
    clock.advance(5 * SECOND);
    expect(await beatWorker(store.db, 'wkr_idle', clock.now().toISOString(), 0)).toBe(true);
    expect((await health()).workers).toEqual({
      live: [
        {
          worker_id: 'wkr_idle',
          kind: 'embedded',
          host: 'node-1',
          pid: 4242,
          version: '0.1.0',
          started_at: started,
          last_heartbeat: clock.now().toISOString(),
          chunks: 0,
          chunks_done: 0,
        },
      ],
      lost_24h: 0,
    });
  });

  it('counts a worker silent for more than the lease (three beats) as lost, for a day', async () => {
    await register('wkr_dead');
    clock.advance(LEASE);
    expect((await health()).workers).toMatchObject({ live: [{ worker_id: 'wkr_dead' }], lost_24h: 0 });
    clock.advance(1);
    expect((await health()).workers).toEqual({ live: [], lost_24h: 1 });
    clock.advance(DAY);
    expect((await health()).workers).toEqual({ live: [], lost_24h: 0 });
  });

  it('counts a lost worker whose last chunk lease has not run out yet as lost, not as a live lease holder', async () => {
    await register('wkr_busy');
    await claimChunk(
      store.db,
      { job_id: await queuedJob(), seq: 0 },
      'wkr_busy',
      clock.now().toISOString(),
      new Date(clock.now().getTime() + 2 * LEASE).toISOString(),
    );
    clock.advance(LEASE + 1);
    expect((await health()).workers).toEqual({ live: [], lost_24h: 1 });
  });

  it('neither lists nor counts a worker that stopped cleanly, and a beat does not revive it', async () => {
    await register('wkr_gone');
    clock.advance(SECOND);
    await stopWorker(store.db, 'wkr_gone', clock.now().toISOString(), 0);
    expect(await beatWorker(store.db, 'wkr_gone', clock.now().toISOString(), 0)).toBe(false);
    expect((await health()).workers).toEqual({ live: [], lost_24h: 0 });
    clock.advance(HOUR);
    expect((await health()).workers).toEqual({ live: [], lost_24h: 0 });
  });

  it('the sweep deletes the rows of workers not seen for a day, and keeps the others', async () => {
    await register('wkr_old');
    await register('wkr_stopped');
    await stopWorker(store.db, 'wkr_stopped', clock.now().toISOString(), 0);
    clock.advance(DAY - SECOND);
    await register('wkr_new');
    clock.advance(2 * SECOND);
    expect((await sweepOnce(store.db, clock)).workers).toBe(2);
    const left = await store.db.selectFrom('workers').select('id').execute();
    expect(left.map((r) => r.id)).toEqual(['wkr_new']);
    // A worker swept while frozen re-registers at its next beat.
    expect(await beatWorker(store.db, 'wkr_old', clock.now().toISOString(), 0)).toBe(false);
  });

  it('lists the chunks a worker finished, as of its last beat, while it is idle', async () => {
    await register('wkr_worked');
    await register('wkr_fresh');
    clock.advance(5 * SECOND);
    expect(await beatWorker(store.db, 'wkr_worked', clock.now().toISOString(), 12)).toBe(true);
    expect(await beatWorker(store.db, 'wkr_fresh', clock.now().toISOString(), 0)).toBe(true);
    expect((await health()).workers.live).toEqual([
      expect.objectContaining({ worker_id: 'wkr_fresh', chunks: 0, chunks_done: 0 }),
      expect.objectContaining({ worker_id: 'wkr_worked', chunks: 0, chunks_done: 12 }),
    ]);
  });

  it('a started presence registers at once, beats on its timer with the chunks done and marks itself stopped', async () => {
    const leaseMs = 150;
    let chunksDone = 0;
    const presence = startWorkerPresence({
      db: store.db,
      clock,
      logger,
      workerId: 'wkr_timer',
      kind: 'worker',
      leaseMs,
      chunksDone: () => chunksDone,
    });
    const row = () =>
      store.db.selectFrom('workers').selectAll().where('id', '=', 'wkr_timer').executeTakeFirst();
    try {
      await waitFor('the registration', row, 5000, 20);
      expect(await row()).toMatchObject({
        kind: 'worker',
        pid: process.pid,
        stopped_at: null,
        chunks_done: 0,
      });
      clock.advance(10 * SECOND);
      chunksDone = 3;
      const beatAt = clock.now().toISOString();
      await waitFor(
        'a heartbeat',
        async () => ((await row())?.last_heartbeat_at === beatAt ? true : undefined),
        5000,
        20,
      );
      expect((await row())?.chunks_done).toBe(3);
      expect(heartbeatEvery(leaseMs)).toBe(50);
      // Swept while frozen: the next beat registers it again, with its count so far.
      await store.db.deleteFrom('workers').execute();
      await waitFor('the re-registration', row, 5000, 20);
      expect((await row())?.chunks_done).toBe(3);
    } finally {
      clock.advance(SECOND);
      chunksDone = 5;
      await presence.stop();
    }
    const stopped = await store.db.selectFrom('workers').selectAll().executeTakeFirstOrThrow();
    expect(stopped.stopped_at).toBe(clock.now().toISOString());
    // The clean stop writes the final count.
    expect(stopped.chunks_done).toBe(5);
    await sleep(3 * 50);
    expect((await store.db.selectFrom('workers').selectAll().executeTakeFirstOrThrow()).stopped_at).toBe(
      clock.now().toISOString(),
    );
  });
});
