/**
 * The operator console's API (docs/operators.md) through the real app: operators only (404 for
 * members), validation in the dashboard's envelope, suspension taking effect on the account's v1
 * keys and dashboard at once, creation with the owner's link, the health panel, and every action
 * in the account's security log and one structured log line.
 * The operator is a real one: made as `mailverdict operators add` makes one, signed in with the
 * second factor that operators must have, and a member of no account.
 */
import { hostname } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  JobDetail,
  JobList,
  OperatorAccount,
  OperatorAccountList,
  Overview,
  ServiceHealth,
} from '../../src/dashboard/contract.js';
import { startEmbeddedWorkers } from '../../src/runtime.js';
import { listAudit } from '../../src/services/accounts/audit.service.js';
import { fixtureEmails } from '../kit/jobs-kit.js';
import { waitFor } from '../kit/wait-for.js';
import { TRUST_ANCHOR, withTrustAnchor } from '../kit/dns-server.js';
import {
  createDashboardHarness,
  errorCode,
  type Browser,
  type DashboardHarness,
} from '../kit/dashboard-kit.js';

const OPERATOR = 'ops@example.org';

describe('the operator console API', () => {
  let h: DashboardHarness;
  let lines: string[];
  let ops: Browser;
  let member: Browser;
  beforeEach(async () => {
    lines = [];
    h = await createDashboardHarness({
      logLines: lines,
      operatorConsole: {
        egressStatuses: () => [
          { egress: 'default', state: 'ok', since: null, reason: null, lastCheck: null, unchecked: null },
        ],
      },
    });
    await h.signedIn();
    ops = await h.signedInOperator(OPERATOR);
    await h.addMember('member@example.org');
    member = h.browser();
    await member.signIn('member@example.org');
  });
  afterEach(async () => {
    await h.close();
  });

  const patch = (b: Browser, id: string, body: unknown) =>
    b.request('PATCH', `operator/accounts/${id}`, { body });

  it('answers 404 to a member on every operator route, and 401 without a session', async () => {
    const answers = [
      await member.get('operator/accounts'),
      await patch(member, h.accountId, { suspended: true }),
      await member.post('operator/accounts', { email: 'x@example.org' }),
      await member.get('operator/health'),
    ];
    expect(answers.map((r) => [r.statusCode, errorCode(r)])).toEqual(Array(4).fill([404, 'not_found']));
    const anonymous = await h.browser().get('operator/accounts');
    expect(anonymous.statusCode).toBe(401);
    const account = await h.runtime.ctx.db.selectFrom('accounts').selectAll().executeTakeFirstOrThrow();
    expect(account.suspended_at).toBeNull();
  });

  it('lists every account with plan, usage, keys, members, creation date and state', async () => {
    const res = await ops.get('operator/accounts');
    expect(res.statusCode).toBe(200);
    const { accounts } = res.json<OperatorAccountList>();
    expect(accounts).toHaveLength(1);
    expect(accounts[0]).toMatchObject({ id: h.accountId, keys: 2, members: 2, suspended: false });
    expect(accounts[0]!.usage).toEqual(
      expect.objectContaining({ used: expect.any(Number), limit: expect.any(Number) }),
    );
  });

  it('refuses unknown fields, an empty change, an unknown plan and a reason without suspension with 422; an unknown account with 404', async () => {
    for (const body of [
      { plan: 'scale', colour: 'red' },
      {},
      { plan: 'platinum' },
      { reason: 'x' },
      { quota_limit: -1 },
    ]) {
      const res = await patch(ops, h.accountId, body);
      expect([JSON.stringify(body), res.statusCode, errorCode(res)]).toEqual([
        JSON.stringify(body),
        422,
        'invalid_request',
      ]);
    }
    const missing = await patch(ops, 'acct_missing', { plan: 'scale' });
    expect([missing.statusCode, errorCode(missing)]).toEqual([404, 'not_found']);
    const noCsrf = await ops.request('PATCH', `operator/accounts/${h.accountId}`, {
      body: { plan: 'scale' },
      noCsrf: true,
    });
    expect([noCsrf.statusCode, errorCode(noCsrf)]).toEqual([403, 'csrf_rejected']);
  });

  it('changes plan and limits as the CLI does, in the security log with the operator as actor and in a log line', async () => {
    const res = await patch(ops, h.accountId, { plan: 'scale', rate_limit: 50, overage_enabled: false });
    expect(res.statusCode).toBe(200);
    expect(res.json<OperatorAccount>()).toMatchObject({
      plan: 'scale',
      rate_limit: 50,
      overage_enabled: false,
    });
    const [entry] = (await listAudit(h.runtime.ctx.db, h.accountId, { type: 'account_changed' })).entries;
    expect(entry).toMatchObject({
      actor: { kind: 'operator' },
      details: { plan: 'scale', rate_limit: 50, overage_enabled: false, operator_email: OPERATOR },
    });
    const logged = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'operator action');
    expect(logged).toEqual([
      expect.objectContaining({ action: 'account_changed', account_id: h.accountId, plan: 'scale' }),
    ]);
    expect(lines.join('\n')).not.toContain(OPERATOR);
  });

  it("suspends: the account's keys get 403 account_suspended, its members see why and cannot add work; resuming restores it", async () => {
    expect((await h.verify(h.testKey, { email: 'a@valid.example.com' })).statusCode).toBe(200);
    const res = await patch(ops, h.accountId, { suspended: true, reason: 'unpaid invoice' });
    expect(res.json<OperatorAccount>()).toMatchObject({
      suspended: true,
      suspended_reason: 'unpaid invoice',
    });

    const refused = await h.verify(h.testKey, { email: 'a@valid.example.com' });
    expect([refused.statusCode, errorCode(refused)]).toEqual([403, 'account_suspended']);
    const overview = await member.get('overview');
    expect(overview.statusCode).toBe(200);
    expect(overview.json<Overview>().suspension).toMatchObject({ reason: 'unpaid invoice' });
    const key = await member.post('keys', { name: 'more', kind: 'test', scopes: ['verify'] });
    expect([key.statusCode, errorCode(key)]).toEqual([403, 'account_suspended']);
    const verify = await member.post('verify', { email: 'a@valid.example.com' });
    expect([verify.statusCode, errorCode(verify)]).toEqual([403, 'account_suspended']);
    const upload = await member.request('POST', 'lists?name=l.csv&email_column=0&header=false&mode=test', {
      raw: { type: 'text/csv', payload: 'a@valid.example.com\n' },
    });
    expect([upload.statusCode, errorCode(upload)]).toEqual([403, 'account_suspended']);

    expect((await patch(ops, h.accountId, { suspended: false })).json<OperatorAccount>().suspended).toBe(
      false,
    );
    expect((await h.verify(h.testKey, { email: 'a@valid.example.com' })).statusCode).toBe(200);
    expect((await member.get('overview')).json<Overview>().suspension).toBeNull();
    expect((await member.post('keys', { name: 'more', kind: 'test', scopes: ['verify'] })).statusCode).toBe(
      201,
    );
    const types = (await listAudit(h.runtime.ctx.db, h.accountId, {})).entries.map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['account_suspended', 'account_resumed']));
  });

  it("creates an account and shows its owner's one-time link once", async () => {
    const res = await ops.post('operator/accounts', { email: 'new-owner@example.org', plan: 'starter' });
    expect(res.statusCode).toBe(201);
    const body = res.json<{ account: OperatorAccount; owner_invitation: { link: string } }>();
    expect(body.account).toMatchObject({ email: 'new-owner@example.org', plan: 'starter', members: 1 });
    expect(body.owner_invitation.link).toContain('/accept-invite');
    const listed = (await ops.get('operator/accounts')).json<OperatorAccountList>().accounts;
    expect(listed.map((a) => a.id)).toContain(body.account.id);
    expect(JSON.stringify(listed)).not.toContain(body.owner_invitation.link);
    const bad = await ops.post('operator/accounts', { email: 'new@example.org', owner: 'x' });
    expect([bad.statusCode, errorCode(bad)]).toEqual([422, 'invalid_request']);
  });

  it("shows the service's health: jobs by state, chunks, workers, deliveries and egresses", async () => {
    const res = await ops.get('operator/health');
    expect(res.statusCode).toBe(200);
    expect(res.json<ServiceHealth>()).toMatchObject({
      jobs: { queued: 0, processing: 0, completed: 0, failed: 0 },
      chunks: { pending: 0, paused: 0 },
      workers: { live: [], lost_24h: 0 },
      deliveries: { failed_24h: 0, retrying: 0 },
      egresses: [{ egress: 'default', state: 'ok', since: null, reason: null }],
    });
  });

  it("reports the DNS resolver's trust to operators, and to every member for the banner", async () => {
    // The harness's resolver answers the kit's anchor: trusted once checked.
    await h.runtime.ctx.dnsTrust.check();
    const trusted = { trusted: true, state: 'trusted', reason: null };
    expect((await ops.get('operator/health')).json<ServiceHealth>().dns_resolver).toMatchObject(trusted);
    expect((await member.get('service-status')).json()).toMatchObject({ dns_resolver: trusted });

    // The resolver starts to deny the anchor: every name is NXDOMAIN now.
    h.dns.remove(TRUST_ANCHOR);
    await h.runtime.ctx.dnsTrust.check();
    const status = (await member.get('service-status')).json<{ dns_resolver: Record<string, unknown> }>();
    expect(status.dns_resolver).toMatchObject({ trusted: false, state: 'untrusted' });
    expect((await ops.get('operator/health')).json<ServiceHealth>().dns_resolver).toMatchObject({
      trusted: false,
      reason: expect.stringContaining(TRUST_ANCHOR),
    });
    expect((await h.browser().get('service-status')).statusCode).toBe(401);
    withTrustAnchor(h.dns);
    await h.runtime.ctx.dnsTrust.check();
  });

  it('lists the embedded workers of a running process, idle, and forgets them after a clean stop', async () => {
    const background = startEmbeddedWorkers(h.runtime.ctx);
    let stopped = false;
    try {
      const started = h.clock.now().toISOString();
      const live = async () => (await ops.get('operator/health')).json<ServiceHealth>().workers.live;
      await waitFor(
        'the embedded worker in the health',
        async () => ((await live()).length > 0 ? true : undefined),
        5000,
        20,
      );
      expect(await live()).toEqual([
        {
          worker_id: background.worker.id,
          kind: 'embedded',
          host: hostname(),
          pid: process.pid,
          version: expect.any(String),
          started_at: started,
          last_heartbeat: started,
          chunks: 0,
          chunks_done: 0,
        },
      ]);
      await background.stop();
      stopped = true;
      h.advance(60_000);
      expect((await ops.get('operator/health')).json<ServiceHealth>().workers).toEqual({
        live: [],
        lost_24h: 0,
      });
    } finally {
      if (!stopped) await background.stop();
    }
  });

  it("labels a suspended account's queued jobs as paused on its lists, and only while it is suspended", async () => {
    const queued = await h.submit(h.testKey, { emails: fixtureEmails(3) });
    expect(queued.statusCode).toBe(202);
    const jobId = queued.json<{ job_id: string }>().job_id;
    const paused = () => member.get('jobs').then((r) => r.json<JobList>().jobs.map((j) => j.paused));
    expect(await paused()).toEqual([null]);
    await patch(ops, h.accountId, { suspended: true });
    expect(await paused()).toEqual(['account_suspended']);
    expect((await member.get(`jobs/${jobId}`)).json<JobDetail>().job.paused).toBe('account_suspended');
    await patch(ops, h.accountId, { suspended: false });
    expect(await paused()).toEqual([null]);
    // A finished job waits for nothing: no label even while suspended.
    expect(await h.drain()).toBeGreaterThan(0);
    await patch(ops, h.accountId, { suspended: true });
    expect((await member.get(`jobs/${jobId}`)).json<JobDetail>().job).toMatchObject({
      status: 'completed',
      paused: null,
    });
  });
});
