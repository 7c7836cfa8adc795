/**
 * The worker loop alone (src/jobs/worker.ts), on fake seams: no store, no engine. What it does
 * with a chunk's life is given to it; these tests pin down when it calls each step, and with
 * which worker id.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ManualClock, SECOND } from '../../src/clock.js';
import { Worker, type WorkerOptions } from '../../src/jobs/worker.js';
import type { ClaimedChunk } from '../../src/services/batches/chunk.service.js';

function chunk(seq: number): ClaimedChunk {
  return {
    job_id: 'job_1',
    seq,
    start_index: seq * 10,
    size: 1,
    emails: '["a@example.com"]',
    repeats: null,
    results: null,
    state: 'pending',
    lease_owner: null,
    lease_expires_at: null,
    attempts: 1,
    valid_count: 0,
    invalid_count: 0,
  };
}

/** A loop over `queue`, recording each step as `step:seq:workerId`. */
function fakeLoop(queue: ClaimedChunk[], overrides: Partial<WorkerOptions> = {}) {
  const calls: string[] = [];
  const leases: Date[] = [];
  const clock = new ManualClock('2026-01-15T12:00:00.000Z');
  const worker = new Worker({
    workerId: 'wkr_test',
    clock,
    logger: pino({ level: 'silent' }),
    concurrency: 1,
    pollIntervalMs: 10,
    leaseMs: 30 * SECOND,
    async claim(workerId, leaseUntil) {
      const next = queue.shift();
      if (next) {
        calls.push(`claim:${next.seq}:${workerId}`);
        leases.push(leaseUntil);
      }
      return next;
    },
    async begin(c, workerId) {
      calls.push(`begin:${c.seq}:${workerId}`);
      return {
        chunk: c,
        job: { id: c.job_id, mode: 'test' },
        emails: [],
        repeats: [],
        log: pino(),
      };
    },
    async verify(begun) {
      calls.push(`verify:${begun.chunk.seq}`);
      return [];
    },
    async complete(begun, workerId) {
      calls.push(`complete:${begun.chunk.seq}:${workerId}`);
      return true;
    },
    async release(c, workerId) {
      calls.push(`release:${c.seq}:${workerId}`);
    },
    renew: async () => true,
    ...overrides,
  });
  return { worker, calls, leases, clock };
}

describe('the worker loop', () => {
  it('runs one claimed chunk through begin, verify and complete under its injected worker id', async () => {
    const { worker, calls } = fakeLoop([chunk(0)]);
    expect(worker.id).toBe('wkr_test');
    expect(await worker.runOnce()).toBe(true);
    expect(calls).toEqual(['claim:0:wkr_test', 'begin:0:wkr_test', 'verify:0', 'complete:0:wkr_test']);
    expect(await worker.runOnce()).toBe(false);
  });

  it('asks for a lease that ends one lease length after the clock’s now', async () => {
    const { worker, leases, clock } = fakeLoop([chunk(0)]);
    clock.advance(5 * SECOND);
    await worker.runOnce();
    expect(leases).toEqual([new Date('2026-01-15T12:00:35.000Z')]);
  });

  it('does not verify or complete a chunk that begin turned down', async () => {
    const { worker, calls } = fakeLoop([chunk(0), chunk(1)], {
      begin: async (c) => (c.seq === 0 ? 'released' : 'job-failed'),
    });
    expect(await worker.runOnce()).toBe(true);
    expect(await worker.runOnce()).toBe(true);
    expect(calls).toEqual(['claim:0:wkr_test', 'claim:1:wkr_test']);
  });

  it('counts the chunks it completed or settled by failing their job, not those released or lost', async () => {
    const { worker } = fakeLoop([chunk(0), chunk(1), chunk(2), chunk(3), chunk(4)], {
      begin: async (c) =>
        c.seq === 1
          ? 'released'
          : c.seq === 2
            ? 'job-failed'
            : { chunk: c, job: { id: c.job_id, mode: 'test' }, emails: [], repeats: [], log: pino() },
      // Chunk 3's lease was lost before its results were written.
      complete: async (begun) => begun.chunk.seq !== 3,
    });
    expect(worker.chunksDone).toBe(0);
    while (await worker.runOnce());
    // Chunks 0 and 4 completed, chunk 2 settled with its failed job.
    expect(worker.chunksDone).toBe(3);
  });

  it('hands a chunk being verified back on stop(), without completing it', async () => {
    let verifying!: () => void;
    const started = new Promise<void>((resolve) => (verifying = resolve));
    const { worker, calls } = fakeLoop([chunk(0)], {
      verify: (_begun, signal) =>
        new Promise((_resolve, reject) => {
          verifying();
          signal.addEventListener('abort', () => reject(signal.reason as Error));
        }),
    });
    worker.start();
    await started;
    await worker.stop();
    expect(calls).toEqual(['claim:0:wkr_test', 'begin:0:wkr_test', 'release:0:wkr_test']);
  });
});
