/**
 * The account's allow and block filters from the dashboard (issue 27): listed, added with the v1
 * service's normalisation and errors, deleted, recorded in the security log, refused while the
 * account is suspended, confined to the account, and deciding the account's live verifications.
 * A real app on a real store (PostgreSQL with MAILVERDICT_TEST_STORE=postgres).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditPage, FilterItem, FilterList } from '../../src/dashboard/contract.js';
import type { VerificationResult } from '../../src/engine/types.js';
import { changeAccount } from '../../src/services/accounts/accounts.service.js';
import { createFilter } from '../../src/services/outcomes/filters.service.js';
import {
  API,
  createDashboardHarness,
  errorCode,
  type Browser,
  type DashboardHarness,
} from '../kit/dashboard-kit.js';

/** Each test hashes passwords with scrypt (100-200 ms idle, seconds on a loaded 2-core machine). */
const SLOW = { timeout: 60_000 };

let h: DashboardHarness;
let browser: Browser;
beforeEach(async () => {
  h = await createDashboardHarness();
  ({ browser } = await h.signedIn());
}, SLOW.timeout);
afterEach(async () => {
  await h.close();
});

async function filterList(as: Browser = browser): Promise<FilterList> {
  const res = await as.get(`${API}/filters`);
  expect(res.statusCode).toBe(200);
  return res.json<FilterList>();
}

const add = (body: unknown, as: Browser = browser) => as.post('filters', body);

describe('dashboard filters', SLOW, () => {
  it('adds filters with the values normalised as the API stores them, lists them oldest first, and deletes one', async () => {
    expect(await filterList()).toEqual({ filters: [], limit: 10_000, mx_limit: 100 });
    const domain = await add({ action: 'block', match: 'domain', value: ' @Competitor.EXAMPLE. ' });
    expect(domain.statusCode).toBe(201);
    expect(domain.json<FilterItem>()).toMatchObject({
      id: expect.stringMatching(/^flt_/),
      action: 'block',
      match: 'domain',
      value: 'competitor.example',
    });
    h.manualClock.advance(1000);
    const email = (
      await add({ action: 'allow', match: 'email', value: 'Jane@Bücher.example' })
    ).json<FilterItem>();
    expect(email.value).toBe('jane@xn--bcher-kva.example');
    h.manualClock.advance(1000);
    const tld = (await add({ action: 'block', match: 'tld', value: '.XYZ' })).json<FilterItem>();
    expect(tld.value).toBe('xyz');

    const listed = await filterList();
    expect(listed.filters.map((f) => f.value)).toEqual([
      'competitor.example',
      'jane@xn--bcher-kva.example',
      'xyz',
    ]);
    // The v1 API reads the same filters.
    const v1 = await h.v1('GET', '/v1/filters', h.liveKey);
    expect(v1.json<{ filters: FilterItem[] }>().filters.map((f) => f.id)).toEqual(
      listed.filters.map((f) => f.id),
    );

    const deleted = await browser.request('DELETE', `${API}/filters/${email.id}`);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json<FilterItem>()).toEqual(email);
    expect((await filterList()).filters.map((f) => f.id)).toEqual([listed.filters[0]!.id, tld.id]);
    const again = await browser.request('DELETE', `${API}/filters/${email.id}`);
    expect([again.statusCode, errorCode(again)]).toEqual([404, 'not_found']);
  });

  it('changes the action of a (match, value) filtered already instead of adding a second filter', async () => {
    const first = (await add({ action: 'block', match: 'domain', value: 'acme.example' })).json<FilterItem>();
    const second = await add({ action: 'allow', match: 'domain', value: 'ACME.example' });
    expect(second.statusCode).toBe(201);
    expect(second.json<FilterItem>()).toMatchObject({ id: first.id, action: 'allow' });
    expect((await filterList()).filters).toHaveLength(1);
  });

  it("refuses a bad value with the service's 422 invalid_request and its reason, and stores nothing", async () => {
    const cases: [unknown, string][] = [
      [{ action: 'block', match: 'email', value: 'not an address' }, 'value: not an e-mail address'],
      [{ action: 'block', match: 'tld', value: 'co.uk' }, 'value: a top-level domain is one label'],
      [{ action: 'block', match: 'domain', value: '[10.0.0.1]' }, 'value: not a domain name'],
    ];
    for (const [body, message] of cases) {
      const res = await add(body);
      expect([res.statusCode, errorCode(res)]).toEqual([422, 'invalid_request']);
      expect(res.json<{ message: string }>().message).toContain(message);
    }
    for (const body of [
      { action: 'maybe', match: 'domain', value: 'acme.example' },
      { action: 'block', match: 'ip', value: 'acme.example' },
      { action: 'block', match: 'domain', value: '' },
      { action: 'block', match: 'domain', value: 'acme.example', extra: 1 },
      { action: 'block', match: 'domain', value: 'acme\u001b.example' },
    ]) {
      const res = await add(body);
      expect(res.statusCode).toBe(422);
      expect(errorCode(res)).toBe('invalid_request');
    }
    expect((await filterList()).filters).toEqual([]);
  });

  it('records each change in the security log, an e-mail filter by its domain only', async () => {
    const email = (
      await add({ action: 'block', match: 'email', value: 'jane@acme.example' })
    ).json<FilterItem>();
    h.manualClock.advance(1000);
    await browser.request('DELETE', `${API}/filters/${email.id}`);
    h.manualClock.advance(1000);
    const mx = (await add({ action: 'block', match: 'mx', value: 'mx.spamtrap.example' })).json<FilterItem>();

    const res = await browser.get(`${API}/audit`);
    const entries = res.json<AuditPage>().entries.filter((e) => e.type.startsWith('filter_'));
    expect(entries.map((e) => [e.type, e.details])).toEqual([
      ['filter_created', { filter_id: mx.id, action: 'block', match: 'mx', value: 'mx.spamtrap.example' }],
      ['filter_deleted', { filter_id: email.id, action: 'block', match: 'email', value: '*@acme.example' }],
      ['filter_created', { filter_id: email.id, action: 'block', match: 'email', value: '*@acme.example' }],
    ]);
    expect(entries[0]!.actor).toMatchObject({ kind: 'member', email: 'owner@example.org' });
    expect(res.body).not.toContain('jane@');
  });

  it('lets a member who is not the owner change filters, as keys', async () => {
    await h.addMember('colleague@example.org', { role: 'member' });
    const colleague = h.browser();
    const session = await colleague.signIn('colleague@example.org');
    expect(session.member?.role).toBe('member');
    const res = await add({ action: 'block', match: 'domain', value: 'acme.example' }, colleague);
    expect(res.statusCode).toBe(201);
    expect((await filterList()).filters).toHaveLength(1);
  });

  it('answers 404 for another account’s filter, exactly as for an unknown id, and leaves it alone', async () => {
    const other = await h.createOtherAccount();
    const theirs = await createFilter(h.runtime.ctx.db, h.clock, {
      accountId: other.accountId,
      action: 'block',
      match: 'domain',
      value: 'theirs.example',
    });
    const res = await browser.request('DELETE', `${API}/filters/${theirs.id}`);
    const unknown = await browser.request('DELETE', `${API}/filters/flt_0000000000000000`);
    expect([res.statusCode, errorCode(res)]).toEqual([404, 'not_found']);
    expect(res.json<{ message: string }>().message).toBe(`no filter ${theirs.id}`);
    expect(unknown.statusCode).toBe(404);
    expect((await filterList()).filters).toEqual([]);
    const kept = await h.v1('GET', '/v1/filters', other.liveKey);
    expect(kept.json<{ filters: FilterItem[] }>().filters.map((f) => f.id)).toEqual([theirs.id]);
  });

  it('refuses changes without the CSRF token', async () => {
    const res = await browser.request('POST', `${API}/filters`, {
      body: { action: 'block', match: 'domain', value: 'acme.example' },
      noCsrf: true,
    });
    expect(res.statusCode).toBe(403);
    expect((await filterList()).filters).toEqual([]);
  });

  it('refuses adding and deleting with 403 account_suspended while the account is suspended; the list still shows', async () => {
    const kept = (await add({ action: 'block', match: 'domain', value: 'acme.example' })).json<FilterItem>();
    await changeAccount(h.runtime.ctx.db, h.clock, h.accountId, { suspended: true, reason: 'unpaid' });
    const added = await add({ action: 'block', match: 'domain', value: 'other.example' });
    expect([added.statusCode, errorCode(added)]).toEqual([403, 'account_suspended']);
    const deleted = await browser.request('DELETE', `${API}/filters/${kept.id}`);
    expect([deleted.statusCode, errorCode(deleted)]).toEqual([403, 'account_suspended']);
    expect((await filterList()).filters.map((f) => f.id)).toEqual([kept.id]);
  });

  it("decides the account's live verifications at once: blocked_by_filter, then a normal check once deleted", async () => {
    const filter = (
      await add({ action: 'block', match: 'domain', value: 'blocked.example' })
    ).json<FilterItem>();
    const blocked = await browser.post('verify', { email: 'ann@mail.blocked.example' });
    expect(blocked.statusCode).toBe(200);
    expect(blocked.json<VerificationResult>()).toMatchObject({
      status: 'undeliverable',
      reason: 'blocked_by_filter',
      checks: {
        filter: { passed: false, id: filter.id, action: 'block', match: 'domain', value: 'blocked.example' },
      },
    });
    await browser.request('DELETE', `${API}/filters/${filter.id}`);
    const after = await browser.post('verify', { email: 'ann@mail.blocked.example' });
    expect(after.json<VerificationResult>().reason).not.toBe('blocked_by_filter');
  });
});
