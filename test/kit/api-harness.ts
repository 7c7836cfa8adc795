/**
 * A real app on a real SQLite file in a temp directory, with one account and its keys, for
 * `app.inject()` tests. Live keys use the real engine pointed at an in-process DNS server
 * (and SMTP kit when the test starts one), never the internet.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { buildApp } from '../../src/api/app.js';
import { ManualClock, type Clock } from '../../src/clock.js';
import { loadConfig, type Flags } from '../../src/config.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { createTestSchema, TEST_SECRET_KEY } from './store-harness.js';
import { createAccount } from '../../src/services/accounts/accounts.service.js';
import { createKey } from '../../src/services/keys/keys.service.js';
import { startDnsServer, TRUST_ANCHOR_FLAGS, withTrustAnchor, type FakeDnsServer } from './dns-server.js';

export interface Harness {
  dir: string;
  runtime: Runtime;
  app: FastifyInstance;
  clock: Clock;
  dns: FakeDnsServer;
  accountId: string;
  liveKey: string;
  testKey: string;
  /** POST /v1/verify with a key and a JSON body. */
  verify(key: string, body: unknown): Promise<LightMyRequestResponse>;
  usage(key: string): Promise<LightMyRequestResponse>;
  inject(options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  clock?: Clock;
  flags?: Flags;
  account?: { plan?: string; quotaLimit?: number | null; rateLimit?: number | null };
  /** Collects the app's log lines (level info) instead of discarding them. */
  logLines?: string[];
}

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'mailverdict-api-'));
  // The resolver-trust probes ask the kit's anchor, which this server answers: a name the test leaves
  // out of the zone is a real NXDOMAIN (a suite of a lying resolver passes its own trust flags).
  const dns = withTrustAnchor(await startDnsServer());
  // MAILVERDICT_TEST_STORE=postgres runs the API suites on PostgreSQL (a schema each).
  const databaseUrl =
    process.env.MAILVERDICT_TEST_STORE === 'postgres'
      ? (await createTestSchema({ migrated: true })).url
      : undefined;
  // A suite's own `databaseUrl` flag wins (`undefined`: SQLite even on the PostgreSQL pass).
  const flags = options.flags ?? {};
  const onPostgres = 'databaseUrl' in flags ? flags.databaseUrl !== undefined : databaseUrl !== undefined;
  const config = loadConfig(
    {
      dataDir: dir,
      ...(databaseUrl === undefined ? {} : { databaseUrl }),
      dnsServer: dns.address,
      dnsTimeout: '2s',
      dnsTries: '1',
      allowInternalTargets: 'true',
      ...TRUST_ANCHOR_FLAGS,
      ...options.flags,
      // PostgreSQL needs the key given (docs/security.md, "Secrets at rest").
      ...(onPostgres ? { secretKey: TEST_SECRET_KEY } : {}),
    },
    {},
  );
  const clock = options.clock ?? new ManualClock('2026-03-10T12:00:00.000Z');
  const lines = options.logLines;
  const logger = lines
    ? pino({ level: 'info' }, { write: (line: string) => void lines.push(line) })
    : pino({ level: 'silent' });
  const runtime = await createRuntime(config, { clock, logger });
  const app = buildApp(runtime.ctx);
  await app.ready();
  const { db } = runtime.ctx;
  const account = await createAccount(db, clock, {
    email: 'owner@example.org',
    rateLimit: 1000,
    ...options.account,
  });
  const live = await createKey(db, clock, { accountId: account.id, kind: 'live' });
  const test = await createKey(db, clock, { accountId: account.id, kind: 'test' });
  const inject = (o: InjectOptions) => app.inject(o);
  return {
    dir,
    runtime,
    app,
    clock,
    dns,
    accountId: account.id,
    liveKey: live.key,
    testKey: test.key,
    inject,
    verify: (key, body) =>
      inject({
        method: 'POST',
        url: '/v1/verify',
        headers: { authorization: `Bearer ${key}` },
        payload: body as object,
      }),
    usage: (key) =>
      inject({ method: 'GET', url: '/v1/account/usage', headers: { authorization: `Bearer ${key}` } }),
    async close() {
      await app.close();
      await runtime.close();
      await dns.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Asserts the error envelope and returns the parsed body. */
export function errorOf(res: LightMyRequestResponse): { error: string; message: string; request_id: string } {
  return res.json();
}
