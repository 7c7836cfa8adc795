/**
 * The operator console's services (docs/operators.md) on every backend: the account list with
 * usage, keys and members; changes shared with the CLI, each in the account's security log and
 * one structured log line; accounts created with the owner's invitation; the health panel.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { listAudit } from '../../src/services/accounts/audit.service.js';
import { createKey, revokeKey } from '../../src/services/keys/keys.service.js';
import { issueInvitation, type MembersDeps } from '../../src/services/people/members.service.js';
import {
  changeOperatorAccount,
  createOperatorAccount,
  listOperatorAccounts,
  type OperatorDeps,
} from '../../src/services/operators/operator-accounts.service.js';
import { resolvePlans } from '../../src/services/usage/plans.js';
import { serviceHealth } from '../../src/services/operators/service-health.service.js';
import { consumeQuota } from '../../src/services/usage/usage.service.js';
import { claimChunk } from '../../src/store/chunk.store.js';
import { registerWorker } from '../../src/store/worker.store.js';
import { insertProcessingJob, openTestStore, testBackends, type TestStore } from '../kit/store-harness.js';
import { TRUST_OFF } from '../../src/engine/dns/resolver-trust.js';

const operator = { id: 'mem_operator', email: 'ops@operator.example' };

describe.each(testBackends())('operator console services (%s)', (backend) => {
  let store: TestStore;
  let deps: OperatorDeps & { logger: MembersDeps['logger'] };
  let lines: object[];
  let clock: ManualClock;
  const plans = resolvePlans({});
  beforeEach(async () => {
    store = await openTestStore(backend);
    clock = new ManualClock('2026-03-10T12:00:00.000Z');
    lines = [];
    deps = {
      db: store.db,
      clock,
      plans,
      logger: {
        info: (obj: object) => void lines.push(obj),
        warn: () => {},
      },
    };
  });
  afterEach(async () => {
    await store.close();
  });

  it('lists every account with its plan, usage this period, active keys, members, creation date and state', async () => {
    const a = await createAccount(store.db, clock, { email: 'a@example.org', plan: 'growth' });
    clock.advance(1000);
    const b = await createAccount(store.db, clock, { email: 'b@example.org' });
    await createKey(store.db, clock, { accountId: a.id, kind: 'live' });
    const revoked = await createKey(store.db, clock, { accountId: a.id, kind: 'test' });
    await revokeKey(store.db, clock, revoked.record.id);
    await issueInvitation(store.db, clock, { accountId: a.id, email: 'a@example.org', role: 'owner' });
    await issueInvitation(store.db, clock, { accountId: a.id, email: 'm@example.org' });
    await consumeQuota(store.db, { accountId: a.id, count: 7, now: clock.now(), plans });

    const accounts = await listOperatorAccounts(deps);
    expect(accounts.map((x) => x.id)).toEqual([b.id, a.id]);
    expect(accounts[1]).toMatchObject({
      id: a.id,
      email: 'a@example.org',
      plan: 'growth',
      keys: 1,
      members: 2,
      created_at: a.created_at,
      suspended: false,
      suspended_reason: null,
      usage: { used: 7, limit: plans.growth.monthlyQuota, overage_count: 0 },
    });
    expect(accounts[0]).toMatchObject({ keys: 0, members: 0, plan: 'free', usage: { used: 0 } });
  });

  it('changes plan, limits and overage in one update, recorded with the operator as actor', async () => {
    const a = await createAccount(store.db, clock, { email: 'a@example.org' });
    const changed = await changeOperatorAccount(deps, operator, a.id, {
      plan: 'scale',
      quotaLimit: 123,
      rateLimit: 9,
      overageEnabled: false,
    });
    clock.advance(1000);
    expect(changed).toMatchObject({
      plan: 'scale',
      quota_limit: 123,
      rate_limit: 9,
      overage_enabled: false,
      overage_own: true,
      usage: { limit: 123 },
    });
    const back = await changeOperatorAccount(deps, operator, a.id, {
      overageEnabled: null,
      quotaLimit: null,
    });
    expect(back).toMatchObject({
      overage_enabled: plans.scale.overageEnabled,
      overage_own: false,
      quota_limit: null,
    });

    const log = await listAudit(store.db, a.id, {});
    expect(log.entries.map((e) => e.type)).toEqual(['account_changed', 'account_changed']);
    expect(log.entries[1]).toMatchObject({
      actor: { kind: 'operator' },
      details: {
        plan: 'scale',
        quota_limit: 123,
        rate_limit: 9,
        overage_enabled: false,
        operator_id: operator.id,
      },
    });
    expect(lines[0]).toMatchObject({ operator_id: operator.id, account_id: a.id, action: 'account_changed' });
    expect(JSON.stringify(lines)).not.toContain(operator.email);
  });

  it('turns overage off for one account whose plan allows it: the quota then refuses what does not fit', async () => {
    const a = await createAccount(store.db, clock, { email: 'a@example.org', plan: 'starter' });
    expect(plans.starter.overageEnabled).toBe(true);
    await changeOperatorAccount(deps, operator, a.id, { quotaLimit: 5, overageEnabled: false });
    const count = (n: number) =>
      consumeQuota(store.db, { accountId: a.id, count: n, now: clock.now(), plans });
    await count(5);
    await expect(count(1)).rejects.toMatchObject({ code: 'quota_exceeded' });
    await changeOperatorAccount(deps, operator, a.id, { overageEnabled: null });
    await expect(count(1)).resolves.toMatchObject({ overageCount: 1 });
  });

  it('refuses an unknown plan and a reason without a suspension, changing nothing', async () => {
    const a = await createAccount(store.db, clock, { email: 'a@example.org' });
    await expect(changeOperatorAccount(deps, operator, a.id, { plan: 'platinum' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(changeOperatorAccount(deps, operator, a.id, { reason: 'why' })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(
      changeOperatorAccount(deps, operator, 'acct_nope', { suspended: true }),
    ).rejects.toMatchObject({ code: 'not_found' });
    expect((await listOperatorAccounts(deps))[0]).toMatchObject({ plan: 'free', suspended: false });
    expect((await listAudit(store.db, a.id, {})).entries).toEqual([]);
  });

  it('suspends with a reason and resumes, each in the security log; suspending again keeps the first time', async () => {
    const a = await createAccount(store.db, clock, { email: 'a@example.org' });
    const since = clock.now().toISOString();
    expect(
      await changeOperatorAccount(deps, operator, a.id, { suspended: true, reason: 'chargeback' }),
    ).toMatchObject({
      suspended: true,
      suspended_at: since,
      suspended_reason: 'chargeback',
    });
    clock.advance(5000);
    expect(
      await changeOperatorAccount(deps, operator, a.id, { suspended: true, reason: 'still unpaid' }),
    ).toMatchObject({
      suspended_at: since,
      suspended_reason: 'still unpaid',
    });
    clock.advance(1000);
    expect(await changeOperatorAccount(deps, operator, a.id, { suspended: false })).toMatchObject({
      suspended: false,
      suspended_at: null,
      suspended_reason: null,
    });
    const types = (await listAudit(store.db, a.id, {})).entries.map((e) => [
      e.type,
      e.details.reason ?? null,
    ]);
    expect(types).toEqual([
      ['account_resumed', null],
      ['account_suspended', 'still unpaid'],
      ['account_suspended', 'chargeback'],
    ]);
  });

  it("creates an account with its owner's one-time invitation link", async () => {
    const created = await createOperatorAccount(
      { ...deps, config: { publicBaseUrl: 'https://verify.example' }, mailer: null },
      operator,
      { email: 'new@example.org', plan: 'starter' },
    );
    expect(created.account).toMatchObject({ email: 'new@example.org', plan: 'starter', members: 1, keys: 0 });
    expect(created.owner.link).toMatch(/^https:\/\/verify\.example\/accept-invite/);
    expect(created.owner.member).toMatchObject({ email: 'new@example.org', role: 'owner' });
    const types = (await listAudit(store.db, created.account.id, {})).entries.map((e) => e.type).sort();
    expect(types).toEqual(['account_created', 'invitation_created']);
  });

  it('counts jobs by state, pending and paused chunks, and a lease holder without a worker row with its last heartbeat', async () => {
    const a = await createAccount(store.db, clock, { email: 'a@example.org' });
    const now = clock.now().toISOString();
    await insertProcessingJob(store.db, { id: 'job_1', accountId: a.id, now, chunks: 2 });
    await claimChunk(store.db, { job_id: 'job_1', seq: 0 }, 'wkr_a', now, '2026-03-10T12:00:30.000Z');

    const health = await serviceHealth({
      db: store.db,
      clock,
      leaseMs: 30_000,
      dnsTrust: () => TRUST_OFF.status(),
    });
    expect(health.jobs).toEqual({ queued: 0, processing: 1, completed: 0, failed: 0 });
    expect(health.chunks).toEqual({ pending: 2, paused: 0 });
    // A lease holder without a worker row (an older worker) is listed with what its lease tells.
    expect(health.workers).toEqual({
      live: [
        {
          worker_id: 'wkr_a',
          kind: null,
          host: null,
          pid: null,
          version: null,
          started_at: null,
          last_heartbeat: now,
          chunks: 1,
          chunks_done: null,
        },
      ],
      lost_24h: 0,
    });
    // A registered worker holding a chunk: busy, with the chunks its leases hold.
    await registerWorker(store.db, {
      id: 'wkr_b',
      kind: 'worker',
      host: 'node-2',
      pid: 7,
      version: '0.1.0',
      started_at: now,
      chunks_done: 4,
    });
    await claimChunk(store.db, { job_id: 'job_1', seq: 1 }, 'wkr_b', now, '2026-03-10T12:00:30.000Z');
    expect(
      (await serviceHealth({ db: store.db, clock, leaseMs: 30_000, dnsTrust: () => TRUST_OFF.status() }))
        .workers.live,
    ).toEqual([
      expect.objectContaining({
        worker_id: 'wkr_b',
        kind: 'worker',
        host: 'node-2',
        chunks: 1,
        chunks_done: 4,
      }),
      expect.objectContaining({ worker_id: 'wkr_a', kind: null, chunks: 1, chunks_done: null }),
    ]);
    expect(health.deliveries).toEqual({ failed_24h: 0, retrying: 0, last_error: null, last_at: null });
    expect(health.egresses).toBeNull();

    await changeOperatorAccount(deps, operator, a.id, { suspended: true });
    expect(
      (await serviceHealth({ db: store.db, clock, leaseMs: 30_000, dnsTrust: () => TRUST_OFF.status() }))
        .chunks,
    ).toEqual({
      pending: 2,
      paused: 2,
    });
  });
});
