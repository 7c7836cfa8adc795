/**
 * The jobs harness (test/jobs/jobs-kit.ts) with live-key jobs verified by a real batch engine built
 * from the harness's own config: the in-process DNS server, `smtpPort` of the loopback hosts,
 * the documented politeness defaults. The engine runs on the system clock (the harness's
 * ManualClock would never let a back-off end); its warnings are collected.
 */
import { batchEngineOptions } from '../../src/config.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import { createChunkVerifier, type ChunkVerifier } from '../../src/services/batches/chunk-verifier.js';
import { createJobsHarness, type JobsHarness, type JobsHarnessOptions } from '../kit/jobs-kit.js';

export interface LiveJobs {
  h: JobsHarness;
  engine: BatchEngine;
  /** What the engine logged at warn level (hosts given up on...). */
  warnings: Record<string, unknown>[];
  /** Shuts the harness's DNS server down for good: its port answers nothing from now on. */
  stopDns(): Promise<void>;
  close(): Promise<void>;
}

export async function createLiveJobs(options: Omit<JobsHarnessOptions, 'verifyChunk'>): Promise<LiveJobs> {
  // The harness needs the chunk verifier, the verifier needs the harness's config: bound after both exist.
  const bound: { verify?: ChunkVerifier } = {};
  const h = await createJobsHarness({ ...options, verifyChunk: (...args) => bound.verify!(...args) });
  const warnings: Record<string, unknown>[] = [];
  const { ctx } = h.runtime;
  const engine = createBatchEngine(batchEngineOptions(ctx.config), {
    logger: { warn: (obj) => void warnings.push(obj as Record<string, unknown>) },
  });
  bound.verify = createChunkVerifier({
    verifier: ctx.verifier,
    dnsTrust: ctx.dnsTrust,
    batchEngine: engine,
    testDomain: ctx.config.testDomain,
    testModeChunkDelayMs: 0,
  });
  return {
    h,
    engine,
    warnings,
    async stopDns() {
      const { dns } = h;
      await dns.close();
      // The harness closes its DNS server when it closes; it is gone already.
      Object.assign(dns, { close: async () => undefined });
    },
    async close() {
      await h.close();
      await engine.close();
    },
  };
}
