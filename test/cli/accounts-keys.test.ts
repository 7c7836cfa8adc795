import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { runInProcess } from './in-process.js';
import { cleanEnv, ROOT, runCli } from '../kit/cli.js';

describe('mailverdict accounts and keys', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailverdict-cli-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const cli = (...args: string[]) => runInProcess([...args, '--data-dir', dir]);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON printed by the command
  const json = async (...args: string[]): Promise<any> => JSON.parse(await cli(...args, '--json'));

  it('creates an account, a key, lists, revokes and shows them, as JSON', async () => {
    const account = await json(
      'accounts',
      'create',
      '--email',
      'ops@example.org',
      '--plan',
      'growth',
      '--rate-limit',
      '77',
    );
    expect(account).toMatchObject({
      email: 'ops@example.org',
      plan: 'growth',
      rate_limit: 77,
      quota_limit: null,
    });
    expect(account.id).toMatch(/^acct_[0-9A-Za-z]{16}$/);

    const key = await json(
      'keys',
      'create',
      '--account',
      account.id,
      '--kind',
      'live',
      '--scopes',
      'verify,usage:read',
      '--name',
      'ci',
    );
    expect(Object.keys(key).slice(0, 2)).toEqual(['id', 'key']);
    expect(key.id).toMatch(/^key_/);
    expect(key.key).toMatch(/^svc_live_[0-9A-Za-z]{40}$/);
    expect(key).toMatchObject({
      kind: 'live',
      scopes: ['verify', 'usage:read'],
      name: 'ci',
      status: 'active',
    });
    expect(key.display).toBe(`svc_live_…${String(key.key).slice(-4)}`);

    const test = await json('keys', 'create', '--account', account.id, '--kind', 'test');
    expect(test.key).toMatch(/^svc_test_/);
    expect(test.scopes).toEqual([
      'verify',
      'batch',
      'jobs:read',
      'usage:read',
      'outcomes:write',
      'outcomes:read',
      'filters:write',
    ]);

    const listed = await cli('keys', 'list', '--account', account.id, '--json');
    expect(listed).not.toContain(key.key);
    expect(listed).not.toContain(test.key);
    expect((JSON.parse(listed) as { id: string }[]).map((k: { id: string }) => k.id)).toEqual([
      key.id,
      test.id,
    ]);

    const revoked = await json('keys', 'revoke', key.id);
    expect(revoked).toMatchObject({ id: key.id, status: 'revoked' });
    expect(revoked.revoked_at).toEqual(expect.any(String));

    await json('accounts', 'set-plan', account.id, '--plan', 'scale');
    const shown = await json('accounts', 'show', account.id);
    expect(shown).toMatchObject({
      id: account.id,
      plan: 'scale',
      usage: { plan: 'scale', quota: { used: 0, limit: 1_000_000 } },
    });
    expect(shown.usage.rate_limit.per_second).toBe(77);
    expect((shown.keys as { status: string }[]).map((k) => k.status)).toEqual(['revoked', 'active']);
    expect(JSON.stringify(shown)).not.toContain(test.key);
    // Usage and keys, never secrets (issue 25): no webhook signing secret, in JSON or text.
    expect(shown).not.toHaveProperty('webhook_secret');
    expect(JSON.stringify(shown)).not.toContain('whsec_');
    const text = await cli('accounts', 'show', account.id);
    expect(text).not.toContain('whsec_');
    expect(text).toContain('webhook signing secret: not shown here');
  });

  it('lists the accounts as JSON and text', async () => {
    const first = await json('accounts', 'create', '--email', 'list-one@example.org');
    const second = await json('accounts', 'create', '--email', 'list-two@example.org', '--plan', 'unlimited');
    const listed = (await json('accounts', 'list')) as {
      id: string;
      email: string;
      plan: string;
      usage: { limit: number | null };
    }[];
    const ours = listed.filter((a) => a.id === first.id || a.id === second.id);
    expect(ours.map((a) => [a.email, a.plan, a.usage.limit]).sort()).toEqual([
      ['list-one@example.org', 'free', 1000],
      ['list-two@example.org', 'unlimited', null],
    ]);
    const text = await cli('accounts', 'list');
    expect(text).toContain(`${first.id}  list-one@example.org  free  0/1000 used`);
    expect(text).toContain(`${second.id}  list-two@example.org  unlimited  0 used`);
  });

  it('shows what one day at a publishable key’s cap costs, and warns when 30 days of it exceed the quota (issue 26)', async () => {
    const account = await json('accounts', 'create', '--email', 'widget@example.org');
    const base = ['keys', 'create', '--account', account.id, '--kind', 'live', '--publishable'];
    const byDefault = await runCli(
      [...base, '--allowed-origin', 'https://shop.example', '--data-dir', dir, '--json'],
      cleanEnv(),
    );
    expect(byDefault.code).toBe(0);
    expect(byDefault.stderr).not.toContain('warning');
    expect(JSON.parse(byDefault.stdout).cap_cost).toMatchObject({
      daily_cap: 20,
      default_cap: true,
      monthly_quota: 1000,
      day_percent_of_quota: 2,
      month_exceeds_quota: false,
    });
    const greedy = await runCli(
      [...base, '--allowed-origin', 'https://shop.example', '--daily-cap', '1000', '--data-dir', dir],
      cleanEnv(),
    );
    expect(greedy.code).toBe(0);
    expect(greedy.stderr).toMatch(/warning: a daily cap of 1000 .*more than the monthly quota of 1000/);
    expect(greedy.stdout).toContain(
      'daily cap 1000: one day at the cap is 100 % of the monthly quota of 1000',
    );
    const listed = await cli('keys', 'list', '--account', account.id);
    expect(listed).toContain(
      'daily cap 20 (default): one day at the cap is 2 % of the monthly quota of 1000, 30 days 60 %',
    );
  }, 60_000);

  it('creates a publishable key with its allowed origins and limits', async () => {
    const account = await json('accounts', 'create', '--email', 'shop@example.org');
    const key = await json(
      'keys',
      'create',
      '--account',
      account.id,
      '--kind',
      'live',
      '--publishable',
      '--allowed-origin',
      'https://shop.example',
      '--allowed-origin',
      'http://localhost:5173',
      '--visitor-rate-limit',
      '3',
      '--daily-cap',
      '500',
    );
    expect(key.key).toMatch(/^svc_live_pub_[0-9A-Za-z]{40}$/);
    // The snippet the keys page shows, pinned to the built widget by its hash (issue 25).
    const built = readFileSync(join(ROOT, 'dist/widget/widget.js'));
    const integrity = `sha384-${createHash('sha384').update(built).digest('base64')}`;
    expect(key.widget_integrity).toBe(integrity);
    expect(key.widget_snippet).toBe(
      [
        `<script src="http://127.0.0.1:8080/widget.js" integrity="${integrity}" crossorigin="anonymous"`,
        `  data-key="${key.key}" defer></script>`,
        '<input type="email" name="email" autocomplete="email" data-mailverdict>',
      ].join('\n'),
    );
    const asText = await cli(
      'keys',
      'create',
      '--account',
      account.id,
      '--kind',
      'test',
      '--publishable',
      '--allowed-origin',
      'https://shop.example',
      '--public-base-url',
      'https://verify.example.com',
    );
    expect(asText).toContain(`<script src="https://verify.example.com/widget.js" integrity="${integrity}"`);
    expect(asText).not.toContain('Store it now');
    expect(key).toMatchObject({
      publishable: true,
      scopes: ['verify'],
      allowed_origins: ['https://shop.example', 'http://localhost:5173'],
      visitor_rate_limit: 3,
      key_rate_limit: null,
      daily_cap: 500,
    });
    const listed = JSON.parse(await cli('keys', 'list', '--account', account.id, '--json')) as unknown[];
    expect(listed).toHaveLength(2);
    expect(JSON.stringify(listed)).not.toContain(key.key);
    await expect(
      cli(
        'keys',
        'create',
        '--account',
        account.id,
        '--kind',
        'test',
        '--publishable',
        '--allowed-origin',
        'https://shop.example/signup',
      ),
    ).rejects.toThrow(/must not have a path/);
    await expect(
      cli(
        'keys',
        'create',
        '--account',
        account.id,
        '--kind',
        'test',
        '--allowed-origin',
        'https://shop.example',
      ),
    ).rejects.toThrow(/--allowed-origin needs --publishable/);
  });

  it('prints text without --json', async () => {
    const account = await json('accounts', 'create', '--email', 'text@example.org');
    expect(await cli('accounts', 'show', account.id)).toContain(
      `account ${account.id} <text@example.org>, plan free`,
    );
    expect(await cli('keys', 'list', '--account', account.id)).toBe('no keys\n');
  });

  it('refuses a bad value with a ConfigError naming it', async () => {
    await expect(cli('accounts', 'create', '--email', 'a@example.org', '--plan', 'platinum')).rejects.toThrow(
      ConfigError,
    );
    await expect(
      cli('accounts', 'create', '--email', 'a@example.org', '--quota-limit', 'lots'),
    ).rejects.toThrow(/--quota-limit/);
    await expect(cli('keys', 'create', '--account', 'acct_x', '--kind', 'staging')).rejects.toThrow(
      /kind must be live or test/,
    );
  });

  it('exits 2 on a bad value and 1 on an unknown key, through the real command', async () => {
    const bad = await runCli([
      'accounts',
      'create',
      '--email',
      'a@example.org',
      '--plan',
      'platinum',
      '--data-dir',
      dir,
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('plan must be one of free, starter, growth, pro, scale, enterprise');
    const unknown = await runCli(['keys', 'revoke', 'key_doesnotexist', '--data-dir', dir]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no key key_doesnotexist');
  }, 60_000);
});
