/**
 * PostgreSQL going away under a running API (issue 8: "PostgreSQL restarted during a job"; the
 * client side of issue 7's store faults). The API reaches PostgreSQL through a loopback TCP
 * proxy that the test can cut: existing connections are reset and new ones refused, as when the
 * server restarts. Requests get 503 service_unavailable with Retry-After, /readyz says not
 * ready, nothing is counted, and once the proxy is back the same requests succeed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../kit/api-harness.js';
import { createTestSchema, testBackends } from '../kit/store-harness.js';
import { CuttableProxy } from './cuttable-proxy.js';

const backends = testBackends();

describe.skipIf(!backends.includes('postgres'))('PostgreSQL going away under the API', () => {
  let proxy: CuttableProxy;
  let h: Harness;

  beforeAll(async () => {
    const target = new URL((await createTestSchema()).url);
    proxy = new CuttableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    await proxy.start();
    target.hostname = '127.0.0.1';
    target.port = String(proxy.port);
    h = await createHarness({ flags: { databaseUrl: target.toString() }, account: { plan: 'starter' } });
  });
  afterAll(async () => {
    await proxy.cut();
    await h.close();
  });

  it('answers 503 with Retry-After while it is down, counts nothing, and serves again once it is back', async () => {
    const body = { email: 'anna@valid.example.com' };
    expect((await h.verify(h.testKey, body)).statusCode).toBe(200);
    const usedBefore = (await h.usage(h.liveKey)).json<{ quota: { used: number } }>().quota.used;

    await proxy.cut();
    // Different keys, so no answer can come from the authenticated-key cache.
    for (const key of [h.liveKey, h.testKey]) {
      const res = await h.verify(key, body);
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({
        error: 'service_unavailable',
        request_id: res.headers['x-request-id'],
      });
      expect(res.headers['retry-after']).toBeDefined();
    }
    const ready = await h.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);

    await proxy.start(proxy.port);
    expect((await h.verify(h.testKey, body)).statusCode).toBe(200);
    expect((await h.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const usedAfter = (await h.usage(h.liveKey)).json<{ quota: { used: number } }>().quota.used;
    expect(usedAfter).toBe(usedBefore);
  });
});
