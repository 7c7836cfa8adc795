/**
 * One timed `verifyMany` of the batch probing benchmarks: rate over the whole run and over its
 * steady middle (from 10% to 90% of the addresses settled, without the start and the tail),
 * the engine's CPU per address, and the results by status/reason.
 */
import type { BatchEngineDeps } from '../../src/engine/batch/batch-engine.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngineOptions } from '../../src/engine/batch/types.js';
import type { VerificationResult } from '../../src/engine/types.js';

export interface EngineRun {
  addresses: number;
  seconds: number;
  perSecond: number;
  /** Addresses per second between 10% and 90% of them settled. */
  steadyPerSecond: number;
  cpuMsPerAddress: number;
  statuses: Record<string, number>;
}

export async function runEngine(
  emails: string[],
  options: BatchEngineOptions,
  label: string,
  deps: BatchEngineDeps = {},
): Promise<EngineRun> {
  const engine = createBatchEngine(options, deps);
  const settledAt: number[] = [];
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  let results: VerificationResult[];
  const ticker = setInterval(
    () => process.stderr.write(`  ${label}: ${settledAt.length}/${emails.length}\n`),
    5000,
  );
  try {
    results = await engine.verifyMany(emails, { onResult: () => settledAt.push(performance.now()) });
  } finally {
    clearInterval(ticker);
    await engine.close();
  }
  const seconds = (performance.now() - startedAt) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const statuses: Record<string, number> = {};
  for (const r of results) {
    const key = `${r.status}/${r.reason ?? '-'}`;
    statuses[key] = (statuses[key] ?? 0) + 1;
  }
  const from = Math.floor(settledAt.length * 0.1);
  const to = Math.floor(settledAt.length * 0.9);
  const steadyMs = (settledAt[to] ?? 0) - (settledAt[from] ?? 0);
  return {
    addresses: emails.length,
    seconds,
    perSecond: emails.length / seconds,
    steadyPerSecond: steadyMs > 0 ? ((to - from) * 1000) / steadyMs : 0,
    cpuMsPerAddress: (cpu.user + cpu.system) / 1000 / emails.length,
    statuses,
  };
}
