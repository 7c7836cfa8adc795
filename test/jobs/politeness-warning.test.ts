/**
 * What the background workers say at start-up about the per-MX-host cap: without Redis, a process
 * that may share its store with other workers warns that its cap and back-off are its own; with
 * Redis they are shared and it does not.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createRuntime, startEmbeddedWorkers, type BackgroundOptions } from '../../src/runtime.js';
import { skipWithoutRedis, TEST_REDIS_URL } from '../redis/redis-kit.js';

const dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-politeness-warning-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Starts and stops the background workers; returns the messages they logged at warn or above. */
async function startUpWarnings(
  flags: Record<string, string>,
  options: Pick<BackgroundOptions, 'storeShared'>,
): Promise<string[]> {
  const lines: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
  const runtime = await createRuntime(loadConfig({ dataDir, ...flags }, {}), { logger });
  try {
    await startEmbeddedWorkers(runtime.ctx, { ...options, coordination: runtime.coordination }).stop();
  } finally {
    await runtime.close();
  }
  return lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
}

describe('the per-host cap at worker start-up', () => {
  it('without Redis, a worker that may share its store warns that its cap is its own', async () => {
    const warnings = await startUpWarnings({}, { storeShared: true });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/no Redis configured.*per-MX-host session cap.*on its own/);
  });

  it('a process alone on its store says nothing about it', async () => {
    expect(await startUpWarnings({}, { storeShared: false })).toEqual([]);
  });

  it.skipIf(skipWithoutRedis('Worker start-up with Redis'))(
    'with Redis, the cap is shared and nothing is said',
    async () => {
      const flags = { redisUrl: TEST_REDIS_URL, redisKeyPrefix: `mvtest:${randomUUID()}:` };
      expect(await startUpWarnings(flags, { storeShared: true })).toEqual([]);
    },
  );
});
