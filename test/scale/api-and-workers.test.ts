/**
 * The rules of one process, held by many: two real `serve --no-embedded-workers` processes and
 * three real `worker` processes on one PostgreSQL schema and one Redis key prefix (issue 8, "Tests
 * on the real services"; docs/scaling.md, "What holds with many processes").
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { createKey } from '../../src/services/keys/keys.service.js';
import { startDnsServer, TRUST_ANCHOR_ENV, withTrustAnchor, type FakeDnsServer } from '../kit/dns-server.js';
import {
  api,
  createKeysInChildren,
  scaleServices,
  skipWithoutServices,
  waitFor,
  type Child,
  type ScaleServices,
} from './scale-kit.js';

const SUITE = 'scale-out: 2 API and 3 worker processes on PostgreSQL and Redis';

describe.skipIf(skipWithoutServices(SUITE))(SUITE, () => {
  let s: ScaleServices;
  let dns: FakeDnsServer;
  let apis: (Child & { url: string })[];
  let workers: (Child & { worker: string })[];

  beforeAll(async () => {
    s = await scaleServices();
    // Live verifications resolve here; every name it does not know is NXDOMAIN, so they end fast.
    dns = withTrustAnchor(await startDnsServer());
    const apiSettings = {
      MAILVERDICT_DNS_SERVERS: dns.address,
      ...TRUST_ANCHOR_ENV,
      MAILVERDICT_CHUNK_SIZE: '1000',
    };
    const workerSettings = {
      // 2 chunks of 1,000 at a time per worker, 100 ms each: the 200-chunk job takes a few seconds.
      MAILVERDICT_TEST_MODE_CHUNK_DELAY_MS: '100',
      MAILVERDICT_CHUNK_CONCURRENCY: '2',
      MAILVERDICT_WORKER_LEASE: '2s',
      MAILVERDICT_WORKER_POLL_INTERVAL: '200ms',
    };
    [apis, workers] = await Promise.all([
      Promise.all([s.startApi(apiSettings), s.startApi(apiSettings)]),
      Promise.all([1, 2, 3].map(() => s.startWorker(workerSettings))),
    ]);
  }, 90_000);

  afterAll(async () => {
    await s?.close();
    await dns?.close();
  }, 30_000);

  it('completes a 200,000-address job with exactly one row per address, in order, while a worker is SIGKILLed mid-chunk', async () => {
    const account = await createAccount(s.db, systemClock, { email: 'job@example.com', rateLimit: 1000 });
    const { key } = await createKey(s.db, systemClock, { accountId: account.id, kind: 'test' });
    const total = 200_000;
    const emails = Array.from(
      { length: total },
      (_, i) => `u${i}@${i % 3 === 0 ? 'invalid' : 'valid'}.example.com`,
    );
    const submit = await api(`${apis[0]!.url}/v1/verify/batch`, key, { emails, notify_email: false });
    expect(submit.status).toBe(202);
    const { job_id: jobId } = (await submit.json()) as { job_id: string };

    // The victim holds a live lease on a chunk it has not finished: it is mid-chunk.
    const victim = workers[0]!;
    const heldByVictim = () =>
      s.db
        .selectFrom('job_chunks')
        .select('seq')
        .where('job_id', '=', jobId)
        .where('state', '=', 'pending')
        .where('lease_owner', '=', victim.worker)
        .where('lease_expires_at', '>', new Date().toISOString())
        .execute();
    await waitFor(
      'the first worker holding a chunk',
      async () => ((await heldByVictim()).length > 0 ? true : undefined),
      20_000,
      20,
    );
    victim.child.kill('SIGKILL');
    await victim.exited;
    // What it held when it died (a chunk it finished just before is not among them).
    const orphaned = (await heldByVictim()).map((c) => c.seq);
    expect(orphaned.length).toBeGreaterThan(0);

    const job = await waitFor(
      'the job completing',
      async () => {
        const res = await api(`${apis[1]!.url}/v1/jobs/${jobId}`, key);
        const body = (await res.json()) as { status: string; processed: number; total: number };
        return body.status === 'completed' || body.status === 'failed' ? body : undefined;
      },
      45_000,
      250,
    );
    expect(job).toMatchObject({ status: 'completed', processed: total, total });

    const results = (await (
      await api(`${apis[1]!.url}/v1/jobs/${jobId}/results?format=json`, key)
    ).json()) as {
      results: { index: number; email: string; status: string }[];
    };
    expect(results.results).toHaveLength(total);
    const outOfPlace = results.results.findIndex(
      (r, i) =>
        r.index !== i ||
        r.email !== emails[i] ||
        r.status !== (i % 3 === 0 ? 'undeliverable' : 'deliverable'),
    );
    expect(outOfPlace).toBe(-1);

    // The chunks the victim held were taken over after its lease expired, not lost or doubled.
    const taken = await s.db
      .selectFrom('job_chunks')
      .select(['seq', 'state', 'attempts', 'lease_owner'])
      .where('job_id', '=', jobId)
      .where('seq', 'in', orphaned)
      .execute();
    expect(taken).toHaveLength(orphaned.length);
    for (const chunk of taken) {
      expect(chunk.state).toBe('done');
      expect(chunk.attempts).toBeGreaterThanOrEqual(2);
    }
  }, 90_000);

  it('admits exactly the quota of 50 out of 200 concurrent live verifications spread over both API processes', async () => {
    const account = await s.account({ email: 'quota@example.com', quotaLimit: 50 });
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        api(`${apis[i % 2]!.url}/v1/verify`, account.liveKey, { email: `user${i}@nowhere.test` }),
      ),
    );
    const bodies = await Promise.all(responses.map((r) => r.json() as Promise<{ error?: string }>));
    const statuses = responses.map((r, i) => `${r.status} ${bodies[i]!.error ?? ''}`.trim());
    const tally: Record<string, number> = {};
    for (const status of statuses) tally[status] = (tally[status] ?? 0) + 1;
    expect(tally).toEqual({ '200': 50, '429 quota_exceeded': 150 });

    for (const a of apis) {
      const usage = (await (await api(`${a.url}/v1/account/usage`, account.liveKey)).json()) as {
        quota: { used: number; limit: number };
      };
      expect(usage.quota).toMatchObject({ used: 50, limit: 50 });
    }
  }, 30_000);

  it('makes one job of identical idempotent submissions sent at once to both API processes', async () => {
    const account = await s.account({ email: 'idem@example.com' });
    const body = { emails: ['a@valid.example.com', 'b@valid.example.com'], notify_email: false };
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        fetch(`${apis[i % 2]!.url}/v1/verify/batch`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${account.liveKey}`,
            'content-type': 'application/json',
            'idempotency-key': 'same-list-once',
          },
          body: JSON.stringify(body),
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 10 }, () => 202));
    const jobIds = await Promise.all(
      responses.map(async (r) => ((await r.json()) as { job_id: string }).job_id),
    );
    expect(new Set(jobIds).size).toBe(1);
    expect(responses.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(9);
    const jobs = await s.db.selectFrom('jobs').select('id').where('account_id', '=', account.id).execute();
    expect(jobs).toHaveLength(1);
    // Counted once against the quota, by the one submission that made the job.
    const usage = (await (await api(`${apis[0]!.url}/v1/account/usage`, account.liveKey)).json()) as {
      quota: { used: number };
    };
    expect(usage.quota.used).toBe(2);
  }, 30_000);

  it('lets exactly 10 keys stay active when 20 are created at once by four processes', async () => {
    const account = await s.account({ email: 'keys@example.com' });
    const outcomes = await createKeysInChildren(s.databaseUrl, account.id, 4, 5);
    expect(outcomes.flatMap((o) => o.failed)).toEqual([]);
    // account() made one key already: 9 of the 20 fit.
    expect(outcomes.reduce((n, o) => n + o.created, 0)).toBe(9);
    expect(outcomes.reduce((n, o) => n + o.refused, 0)).toBe(11);
    const active = await s.db
      .selectFrom('api_keys')
      .select(({ fn }) => fn.countAll<string>().as('n'))
      .where('account_id', '=', account.id)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    expect(Number(active.n)).toBe(10);
  }, 30_000);

  it('refuses a key revoked from the CLI on the next request to either API process', async () => {
    const account = await s.account({ email: 'revoke@example.com' });
    // Both processes answer the key a few times, so both hold it in their key cache (a process
    // caches only once its change listener, opened on its first authentication, is up).
    for (let i = 0; i < 3; i++) {
      for (const a of apis)
        expect((await api(`${a.url}/v1/account/usage`, account.liveKey)).status).toBe(200);
      await sleep(100);
    }

    const revoked = await s.cli(['keys', 'revoke', account.liveKeyId, '--json']);
    expect(revoked.code, revoked.stderr).toBe(0);

    const after = await Promise.all(apis.map((a) => api(`${a.url}/v1/account/usage`, account.liveKey)));
    expect(after.map((r) => r.status)).toEqual([401, 401]);
  }, 30_000);

  it('admits at most 10 requests in any sliding second on a 10/s plan across both API processes', async () => {
    const account = await s.account({ email: 'rate@example.com', rateLimit: 10 });
    const admitted: { sent: number; arrived: number }[] = [];
    const send = async (i: number): Promise<number> => {
      const sent = performance.now();
      const res = await api(`${apis[i % 2]!.url}/v1/account/usage`, account.liveKey);
      await res.arrayBuffer();
      if (res.status === 200) admitted.push({ sent, arrived: performance.now() });
      return res.status;
    };
    // A burst of 30 at once, then 30 more, one every 25 ms, into the next second: a fixed window
    // (or a token bucket of 10) admits up to 20 within one second somewhere in there.
    const statuses: Promise<number>[] = Array.from({ length: 30 }, (_, i) => send(i));
    await sleep(250);
    for (let i = 30; i < 60; i++) {
      statuses.push(send(i));
      await sleep(25);
    }
    const all = await Promise.all(statuses);
    expect(all.every((status) => status === 200 || status === 429)).toBe(true);
    expect(admitted.length).toBeGreaterThanOrEqual(10);

    // The server admitted each request between its sending and its response. Eleven admissions
    // whose span from the first sending to the last arrival is under a second broke the rule
    // whatever the network delays were.
    admitted.sort((a, b) => a.sent - b.sent);
    let tightest = Infinity;
    for (let i = 0; i + 10 < admitted.length; i++) {
      const eleven = admitted.slice(i, i + 11);
      tightest = Math.min(tightest, Math.max(...eleven.map((a) => a.arrived)) - eleven[0]!.sent);
    }
    expect(tightest).toBeGreaterThanOrEqual(1000);
  }, 30_000);
});
