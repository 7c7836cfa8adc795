/**
 * Outcome sources from the dashboard (docs/outcomes.md, "Mail systems"): connected with the URL
 * shown once, its deliveries counted in the list, deleted with effect on the next delivery, both
 * in the security log; another account's source answers 404 like an unknown one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditPage, CreatedOutcomeSource, OutcomeSourceList } from '../../src/dashboard/contract.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { createOutcomeSource } from '../../src/services/outcomes/sources.service.js';
import {
  API,
  createDashboardHarness,
  errorCode,
  type Browser,
  type DashboardHarness,
} from '../kit/dashboard-kit.js';

let h: DashboardHarness;
let browser: Browser;
beforeAll(async () => {
  h = await createDashboardHarness();
  ({ browser } = await h.signedIn());
}, 60_000);
afterAll(async () => {
  await h?.close();
});

/** A Postmark delivery to the URL with its credentials, as Postmark sends it. */
function deliver(url: string, recipient: string) {
  const u = new URL(url);
  return h.app.inject({
    method: 'POST',
    url: u.pathname,
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${u.username}:${u.password}`).toString('base64')}`,
    },
    payload: JSON.stringify({
      RecordType: 'Delivery',
      MessageID: 'c4f5a1d2-0000-4000-8000-000000000001',
      Recipient: recipient,
      DeliveredAt: h.manualClock.now().toISOString(),
      Details: 'Test delivery webhook details',
    }),
  });
}

describe('dashboard outcome sources', { timeout: 60_000 }, () => {
  it('connects Postmark, counts its deliveries, and deletes it with effect on the next one', async () => {
    const res = await browser.post('outcome-sources', { provider: 'postmark', label: 'transactional' });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json<CreatedOutcomeSource>();
    expect(created.source).toMatchObject({ provider: 'postmark', label: 'transactional', events_taken: 0 });
    const url = created.basic_auth!.url;
    expect((await deliver(url, 'ann@example.com')).statusCode).toBe(200);

    const list = await browser.get(`${API}/outcome-sources`);
    expect(list.body).not.toContain(created.basic_auth!.password);
    expect(list.body).not.toContain(created.url.split('/').pop()!);
    const listed = list.json<OutcomeSourceList>();
    expect(listed.sources.find((s) => s.id === created.source.id)).toMatchObject({ events_taken: 1 });

    const del = await browser.request('DELETE', `${API}/outcome-sources/${created.source.id}`);
    expect(del.statusCode).toBe(204);
    expect(errorCode(await deliver(url, 'bob@example.com'))).toBe('invalid_hook_token');

    const log = (await browser.get(`${API}/audit?type=outcome_source_created`)).json<AuditPage>();
    expect(log.entries[0]).toMatchObject({ type: 'outcome_source_created' });
    const gone = (await browser.get(`${API}/audit?type=outcome_source_deleted`)).json<AuditPage>();
    expect(gone.entries).toHaveLength(1);
  });

  it("answers a GET of a hook URL with the API's 404, not the app's page", async () => {
    const res = await h.app.inject({ method: 'GET', url: '/hooks/outcomes/osrc_0000000000000000/token' });
    expect(res.statusCode).toBe(404);
    expect(errorCode(res)).toBe('not_found');
  });

  it("answers 404 for another account's source, and leaves it in place", async () => {
    const db = h.runtime.ctx.db;
    const other = await createAccount(db, h.manualClock, { email: 'other@example.org' });
    const theirs = await createOutcomeSource(db, h.manualClock, 'https://x.example', {
      accountId: other.id,
      provider: 'ses',
    });
    const res = await browser.request('DELETE', `${API}/outcome-sources/${theirs.id}`);
    expect(res.statusCode).toBe(404);
    expect(errorCode(res)).toBe('not_found');
    const still = await db.selectFrom('outcome_sources').select('id').where('id', '=', theirs.id).execute();
    expect(still).toHaveLength(1);
  });

  it('refuses a SendGrid source without its verification key, storing nothing', async () => {
    const res = await browser.post('outcome-sources', { provider: 'sendgrid' });
    expect(res.statusCode).toBe(422);
    expect(errorCode(res)).toBe('invalid_request');
    const listed = (await browser.get(`${API}/outcome-sources`)).json<OutcomeSourceList>();
    expect(listed.sources.some((s) => s.provider === 'sendgrid')).toBe(false);
  });
});
