/**
 * Issue 26: `/metrics` need not be public on the listener that the widget exposes to the Internet.
 * `--metrics-listen` moves it to a listener of its own (the main one then has none) and
 * `--metrics-token` asks for a bearer token (others get 404, as for an unknown route). Through
 * real listening servers (runtime.ts `startServer`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/runtime.js';
import { createHarness, type Harness } from '../kit/api-harness.js';

const TOKEN = 'scrape-me-0123456789abcdef';

let h: Harness | undefined;
let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  await h?.close();
  server = undefined;
  h = undefined;
});

async function serving(flags: Record<string, string>): Promise<RunningServer> {
  h = await createHarness({ flags: { host: '127.0.0.1', port: '0', ...flags } });
  server = await startServer(h.runtime);
  return server;
}

const get = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, { headers }).then(async (res) => ({ status: res.status, text: await res.text() }));

describe('/metrics', () => {
  it('is open on the main listener by default', async () => {
    const s = await serving({});
    expect(s.metricsUrl).toBeNull();
    const res = await get(`${s.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.text).toContain('mailverdict_http_requests_total');
  });

  it('with --metrics-listen, is only on its own listener, which serves nothing else', async () => {
    const s = await serving({ metricsListen: '127.0.0.1:0' });
    expect(s.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(s.metricsUrl).not.toBe(s.url);
    const main = await get(`${s.url}/metrics`);
    expect([main.status, JSON.parse(main.text).error]).toEqual([404, 'not_found']);
    // The main listener's requests are counted in the registry the ops listener shows.
    expect((await get(`${s.url}/healthz`)).status).toBe(200);
    const ops = await get(`${s.metricsUrl!}/metrics`);
    expect(ops.status).toBe(200);
    expect(ops.text).toMatch(/mailverdict_http_requests_total\{[^}]*route="\/healthz"/);
    const other = await get(`${s.metricsUrl!}/v1/account/usage`, { authorization: `Bearer ${h!.testKey}` });
    expect([other.status, JSON.parse(other.text).error]).toEqual([404, 'not_found']);
  });

  it('with --metrics-token, answers only the bearer of the token; anyone else gets 404 as for an unknown route', async () => {
    const s = await serving({ metricsToken: TOKEN });
    const refused: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong-token-0123456789' },
      { authorization: TOKEN },
    ];
    for (const headers of refused) {
      const res = await get(`${s.url}/metrics`, headers);
      expect([headers, res.status, JSON.parse(res.text).error]).toEqual([headers, 404, 'not_found']);
    }
    const scraped = await get(`${s.url}/metrics`, { authorization: `Bearer ${TOKEN}` });
    expect(scraped.status).toBe(200);
    expect(scraped.text).toContain('mailverdict_http_requests_total');
  });

  it('with both, asks for the token on the metrics listener', async () => {
    const s = await serving({ metricsListen: '127.0.0.1:0', metricsToken: TOKEN });
    expect((await get(`${s.metricsUrl!}/metrics`)).status).toBe(404);
    expect((await get(`${s.metricsUrl!}/metrics`, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
  });
});
