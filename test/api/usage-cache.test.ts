/**
 * Usage reads through the per-process cache (services/usage/usage-cache.ts, docs/api.md "Usage"): a
 * process's own counts show at once; another process's show within the cache's TTL; plan changes
 * show at once. A second `buildApp` on the same store stands for a second API process: it has its
 * own caches, as a process would.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { HOUR } from '../../src/clock.js';
import { setAccountPlan } from '../../src/services/accounts/accounts.service.js';
import { storeBackend } from '../../src/store/backend.js';
import { createHarness, type Harness } from '../kit/api-harness.js';
import { WAIT_FOR } from '../kit/wait-for.js';

describe('usage reads and the usage cache', () => {
  let h: Harness | undefined;
  let other: FastifyInstance | undefined;
  afterEach(async () => {
    await other?.close();
    await h?.close();
    h = other = undefined;
  });

  async function secondProcess(harness: Harness, usageCacheTtlMs: number): Promise<FastifyInstance> {
    const ctx = harness.runtime.ctx;
    const app = buildApp({ ...ctx, config: { ...ctx.config, usageCacheTtlMs } });
    await app.ready();
    // PostgreSQL: nothing is cached until the store LISTENs for changes (a cache that cannot
    // hear of a plan change must not answer).
    const changes = storeBackend(ctx.db).changes;
    await vi.waitFor(() => expect(changes.changeToken()).not.toBeNull(), WAIT_FOR);
    return app;
  }

  const usedVia = async (app: FastifyInstance, key: string): Promise<number> => {
    const res = await app.inject({
      method: 'GET',
      url: '/v1/account/usage',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.statusCode).toBe(200);
    return res.json<{ quota: { used: number } }>().quota.used;
  };

  it("shows this process's own count on the next read, however long the TTL", async () => {
    h = await createHarness({ flags: { usageCacheTtl: '1h' } });
    h.dns.setNxdomain('nx-domain.test');
    expect(await usedVia(h.app, h.liveKey)).toBe(0);
    expect((await h.verify(h.liveKey, { email: 'a@nx-domain.test' })).statusCode).toBe(200);
    expect(await usedVia(h.app, h.liveKey)).toBe(1);
  });

  it("answers from memory within the TTL: another process's count shows once the TTL has passed", async () => {
    h = await createHarness();
    h.dns.setNxdomain('nx-domain.test');
    other = await secondProcess(h, 1 * HOUR);
    expect(await usedVia(other, h.liveKey)).toBe(0);
    expect((await h.verify(h.liveKey, { email: 'a@nx-domain.test' })).statusCode).toBe(200);
    // The documented lag: the other process still answers what it read.
    expect(await usedVia(other, h.liveKey)).toBe(0);
    // Its own count empties its entry, and the read that follows sees both counts.
    const res = await other.inject({
      method: 'POST',
      url: '/v1/verify',
      headers: { authorization: `Bearer ${h.liveKey}` },
      payload: { email: 'b@nx-domain.test' },
    });
    expect(res.statusCode).toBe(200);
    expect(await usedVia(other, h.liveKey)).toBe(2);
  });

  it('reads the store every time with a TTL of 0', async () => {
    h = await createHarness();
    h.dns.setNxdomain('nx-domain.test');
    other = await secondProcess(h, 0);
    expect(await usedVia(other, h.liveKey)).toBe(0);
    expect((await h.verify(h.liveKey, { email: 'a@nx-domain.test' })).statusCode).toBe(200);
    expect(await usedVia(other, h.liveKey)).toBe(1);
  });

  it('shows a plan change at once, whichever process made it', async () => {
    h = await createHarness({ account: { plan: 'free', rateLimit: null } });
    other = await secondProcess(h, 1 * HOUR);
    const planVia = async (app: FastifyInstance) =>
      (
        await app.inject({
          method: 'GET',
          url: '/v1/account/usage',
          headers: { authorization: `Bearer ${h?.liveKey}` },
        })
      ).json<{ plan: string }>().plan;
    expect(await planVia(other)).toBe('free');
    await setAccountPlan(h.runtime.ctx.db, h.clock, h.accountId, 'growth');
    expect(await planVia(other)).toBe('growth');
  });
});
