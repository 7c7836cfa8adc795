/**
 * `/metrics` shows the warm SMTP sessions of single verifications: open per host, opened, reused,
 * closed by the server, the reuse ratio, and batch sessions kept idle for single verifications, after
 * real verifications through the API and a batch in the same process.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { batchEngineOptions } from '../../src/config.js';
import { createBatchEngine } from '../../src/engine/index.js';
import { createHarness, type Harness } from '../kit/api-harness.js';
import { startLatencyMta, type LatencyMta } from '../kit/latency-mta.js';
import { waitFor } from '../kit/wait-for.js';

const HOST = '127.0.8.21';
const HOST2 = '127.0.8.22';
let mta: LatencyMta;
let h: Harness;

beforeAll(async () => {
  mta = await startLatencyMta({
    hosts: [HOST, HOST2],
    oneWayMs: 1,
    rcpt: (address) => (address.startsWith('user') ? '250 2.1.5 OK' : '550 5.1.1 User unknown'),
  });
  h = await createHarness({ flags: { smtpPort: String(mta.port), smtpSessionIdle: '5s' } });
  h.dns.setDomain('pool.test', { mx: [{ exchange: 'mx.pool.test', priority: 10 }] });
  h.dns.setDomain('mx.pool.test', { a: [HOST] });
});

afterAll(async () => {
  await h.close();
  await mta.close();
});

it('counts sessions opened and reused, and shows the open ones per host', async () => {
  for (const user of ['user1', 'user2', 'user3']) {
    const res = await h.verify(h.liveKey, { email: `${user}@pool.test` });
    expect(res.json()).toMatchObject({ status: 'deliverable' });
  }
  const text = (await h.inject({ method: 'GET', url: '/metrics' })).body;
  expect(text).toContain(`mailverdict_smtp_single_sessions_open{host="${HOST}"} 1`);
  expect(text).toContain('mailverdict_smtp_single_sessions_opened_total 1');
  expect(text).toContain('mailverdict_smtp_single_sessions_reused_total 2');
  expect(text).toContain('mailverdict_smtp_single_sessions_closed_by_server_total 0');
  expect(text).toContain('mailverdict_smtp_single_sessions_adopted_total 0');
  expect(text).toMatch(/mailverdict_smtp_single_session_reuse_ratio 0\.66/);
  expect(mta.connectionsTo(HOST)).toBe(1);
});

it('counts the batch sessions kept idle in the session broker for single verifications', async () => {
  h.dns.setDomain('bulk.test', { mx: [{ exchange: 'mx.bulk.test', priority: 10 }] });
  h.dns.setDomain('mx.bulk.test', { a: [HOST2] });
  // The process's batch engine shares its caps with the verifier (src/jobs/embedded.ts does this).
  const batch = createBatchEngine(batchEngineOptions(h.runtime.ctx.config), {
    broker: h.runtime.ctx.sessionBroker!,
  });
  try {
    const results = await batch.verifyMany(['user-a@bulk.test', 'user-b@bulk.test']);
    expect(results.map((r) => r.status)).toEqual(['deliverable', 'deliverable']);
    const text = await waitFor(
      'the batch session kept idle',
      async () => {
        const body = (await h.inject({ method: 'GET', url: '/metrics' })).body;
        return body.includes('mailverdict_smtp_single_sessions_adopted_total 1') ? body : undefined;
      },
      2_000,
      20,
    );
    expect(text).toContain(`mailverdict_smtp_single_sessions_open{host="${HOST2}"} 1`);
  } finally {
    await batch.close();
  }
});
