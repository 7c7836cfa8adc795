import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestSchema, TEST_SECRET_KEY, testBackends } from '../kit/store-harness.js';
import { cleanEnv, runCli, spawnMailverdict } from '../kit/cli.js';
import { startDnsServer, TRUST_ANCHOR_ENV, withTrustAnchor, type FakeDnsServer } from '../kit/dns-server.js';

describe('mailverdict serve', () => {
  const dirs: string[] = [];
  // A resolver that tells the truth about the trust anchor: /readyz is ready only then.
  let dns: FakeDnsServer | undefined;
  afterAll(async () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await dns?.close();
  });

  it.each(testBackends())(
    'bootstraps a brand-new %s store once, serves the API over HTTP and stops cleanly on SIGTERM',
    async (backend) => {
      const parent = mkdtempSync(join(tmpdir(), 'mailverdict-serve-'));
      dirs.push(parent);
      // On PostgreSQL the data directory holds only the keys file, and need not exist beforehand.
      const dir = backend === 'sqlite' ? parent : join(parent, 'not-yet');
      const store: Record<string, string> =
        backend === 'sqlite'
          ? {}
          : {
              MAILVERDICT_DATABASE_URL: (await createTestSchema()).url,
              MAILVERDICT_SECRET_KEY: TEST_SECRET_KEY,
            };
      dns ??= withTrustAnchor(await startDnsServer());
      const env = cleanEnv({
        MAILVERDICT_LOG_LEVEL: 'warn',
        MAILVERDICT_EMBEDDED_WORKERS: 'false',
        MAILVERDICT_DNS_SERVERS: dns.address,
        ...TRUST_ANCHOR_ENV,
        ...store,
      });
      const start = async () => {
        const serve = await spawnMailverdict(['serve', '--port', '0', '--data-dir', dir], { env });
        return { child: serve.child, out: JSON.parse(serve.line) };
      };

      const first = await start();
      try {
        expect(first.out).toMatchObject({ event: 'listening', data_dir: dir });
        // stdout is a pipe here, not a terminal: the keys go to an owner-only file, never to the output.
        expect(first.out.live_key).toBeUndefined();
        expect(first.out.keys_file).toBe(join(dir, 'bootstrap-keys.json'));
        expect(statSync(first.out.keys_file).mode & 0o777).toBe(0o600);
        Object.assign(first.out, JSON.parse(readFileSync(first.out.keys_file, 'utf8')));
        expect(first.out.live_key).toMatch(/^svc_live_/);
        expect(first.out.test_key).toMatch(/^svc_test_/);
        const res = await fetch(`${first.out.url}/v1/verify`, {
          method: 'POST',
          headers: { authorization: `Bearer ${first.out.test_key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'anna@valid.example.com' }),
        });
        expect(res.status).toBe(200);
        expect(res.headers.get('x-request-id')).toMatch(/^req_/);
        expect(await res.json()).toMatchObject({ valid: true, status: 'deliverable', score: 99 });
        const usage = await fetch(`${first.out.url}/v1/account/usage`, {
          headers: { authorization: `Bearer ${first.out.live_key}` },
        });
        // The operator's own account: no quota (issue 25).
        expect(((await usage.json()) as { plan: string }).plan).toBe('unlimited');
      } finally {
        first.child.kill('SIGTERM');
      }
      const [code] = await once(first.child, 'exit');
      expect(code).toBe(0);

      // The second start finds the store in use: no new account, no keys printed.
      const second = await start();
      try {
        expect(second.out.live_key).toBeUndefined();
        expect(second.out.keys_file).toBeUndefined();
        const health = await fetch(`${second.out.url}/readyz`);
        expect(health.status).toBe(200);
      } finally {
        second.child.kill('SIGTERM');
      }
      expect((await once(second.child, 'exit'))[0]).toBe(0);
    },
    60_000,
  );

  it('stops with exit code 2 and names the setting when a value is bad', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailverdict-serve-'));
    dirs.push(dir);
    const res = await runCli(['serve', '--port', '99999', '--data-dir', dir], cleanEnv());
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--port');
    const plans = await runCli(
      ['serve', '--port', '0', '--data-dir', dir],
      cleanEnv({ MAILVERDICT_PLANS: '{"gold":{}}' }),
    );
    expect(plans.code).toBe(2);
    expect(plans.stderr).toContain('MAILVERDICT_PLANS');
  }, 60_000);
});
