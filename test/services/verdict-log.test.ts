/**
 * The verdict log (services/outcomes/verdict-log.ts) on every backend: buffered until flushed,
 * one row per (account, address) under the address's key, `since` kept while the verdict stays
 * the same, an older write never over a newer one, the account-decided verdicts left out, and
 * erasure of the buffered and the stored verdict.
 */
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HOUR, ManualClock } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { outcomeAddress } from '../../src/services/outcomes/address-key.js';
import {
  createVerdictLog,
  type LoggedVerdict,
  type VerdictLog,
} from '../../src/services/outcomes/verdict-log.js';
import { upsertVerdicts } from '../../src/store/verdict-log.store.js';
import { openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';

const deliverable = (email: string, score = 95): LoggedVerdict => ({
  email,
  status: 'deliverable',
  reason: null,
  score,
  provider: 'google',
});

describe.each(testBackends())('the verdict log (%s)', (backend) => {
  let store: TestStore;
  let log: VerdictLog;
  let accountId: string;
  let clock: ManualClock;
  beforeEach(async () => {
    clock = new ManualClock('2026-03-10T12:00:00.000Z');
    store = await openTestStore(backend);
    // A flush only when asked (no timer fires within a test).
    log = createVerdictLog({
      db: store.db,
      clock,
      logger: pino({ level: 'silent' }),
      flushIntervalMs: 24 * HOUR,
    });
    accountId = (await createAccount(store.db, clock, { email: 'owner@example.org' })).id;
  });
  afterEach(async () => {
    await log.close();
    await store.close();
  });

  const rows = () => store.db.selectFrom('verdict_log').selectAll().orderBy('address_key').execute();
  const keyOf = (email: string) => {
    const address = outcomeAddress(accountId, email);
    if ('error' in address) throw new Error(address.error);
    return address.key;
  };

  it('writes nothing until flushed, then one row per address under its key, no address in clear', async () => {
    log.record(accountId, [
      deliverable('Ann@Acme.test'),
      deliverable('ann@acme.test', 90),
      deliverable('bob@acme.test'),
    ]);
    expect(await rows()).toEqual([]);
    await log.flush();
    const written = await rows();
    expect(written).toHaveLength(2);
    expect(written.find((r) => r.address_key === keyOf('ann@acme.test'))).toEqual({
      account_id: accountId,
      address_key: keyOf('ann@acme.test'),
      status: 'deliverable',
      reason: '',
      score: 90,
      provider: 'google',
      since: '2026-03-10T12:00:00.000Z',
      verified_at: '2026-03-10T12:00:00.000Z',
    });
    expect(JSON.stringify(written)).not.toMatch(/acme/i);
  });

  it('keeps `since` while the verdict stays the same, and starts it again when it changes', async () => {
    log.record(accountId, [deliverable('ann@acme.test')]);
    await log.flush();
    clock.advance(HOUR);
    log.record(accountId, [deliverable('ann@acme.test')]);
    await log.flush();
    expect((await rows())[0]).toMatchObject({
      since: '2026-03-10T12:00:00.000Z',
      verified_at: '2026-03-10T13:00:00.000Z',
    });
    clock.advance(HOUR);
    log.record(accountId, [
      { email: 'ann@acme.test', status: 'risky', reason: 'catch_all', score: 55, provider: null },
    ]);
    await log.flush();
    expect((await rows())[0]).toMatchObject({
      status: 'risky',
      reason: 'catch_all',
      provider: '',
      since: '2026-03-10T14:00:00.000Z',
      verified_at: '2026-03-10T14:00:00.000Z',
    });
  });

  it('never lets an older verdict replace a newer one (two processes flushing out of order)', async () => {
    clock.advance(HOUR);
    log.record(accountId, [deliverable('ann@acme.test')]);
    await log.flush();
    const older = '2026-03-10T12:30:00.000Z';
    await upsertVerdicts(store.db, [
      {
        account_id: accountId,
        address_key: keyOf('ann@acme.test'),
        status: 'undeliverable',
        reason: 'smtp_rejected',
        score: 5,
        provider: '',
        since: older,
        verified_at: older,
      },
    ]);
    expect((await rows())[0]).toMatchObject({
      status: 'deliverable',
      verified_at: '2026-03-10T13:00:00.000Z',
    });
  });

  it("leaves out the account's own verdicts, test mode and what is not an address", async () => {
    log.record(accountId, [
      {
        email: 'a@acme.test',
        status: 'undeliverable',
        reason: 'previously_bounced',
        score: 4,
        provider: null,
      },
      { email: 'b@acme.test', status: 'risky', reason: 'complained', score: 20, provider: null },
      {
        email: 'c@acme.test',
        status: 'undeliverable',
        reason: 'blocked_by_filter',
        score: 6,
        provider: null,
      },
      { email: 'd@acme.test', status: 'deliverable', reason: 'allowed_by_filter', score: 95, provider: null },
      { email: 'e@example.com', status: 'unknown', reason: 'test_mode', score: 50, provider: null },
      {
        email: 'not an address',
        status: 'undeliverable',
        reason: 'invalid_email_format',
        score: 0,
        provider: null,
      },
      { email: 'f@acme.test', status: 'undeliverable', reason: 'smtp_rejected', score: 5, provider: null },
    ]);
    await log.flush();
    expect((await rows()).map((r) => r.reason)).toEqual(['smtp_rejected']);
  });

  it("erases an address's verdict, buffered or stored, in its account only", async () => {
    const other = (await createAccount(store.db, clock, { email: 'other@example.org' })).id;
    log.record(accountId, [deliverable('ann@acme.test'), deliverable('bob@acme.test')]);
    await log.flush();
    log.record(accountId, [deliverable('cy@acme.test')]);
    log.record(other, [deliverable('ann@acme.test')]);
    expect(await log.erase(accountId, 'ANN@acme.test')).toBe(1);
    expect(await log.erase(accountId, 'cy@acme.test')).toBe(1);
    await log.flush();
    const left = await rows();
    expect(left.filter((r) => r.account_id === accountId).map((r) => r.address_key)).toEqual([
      keyOf('bob@acme.test'),
    ]);
    expect(left.filter((r) => r.account_id === other)).toHaveLength(1);
  });
});
