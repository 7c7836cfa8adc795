import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { runInProcess } from './in-process.js';
import { runCli } from '../kit/cli.js';

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
  });

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
    expect(key).toMatchObject({
      publishable: true,
      scopes: ['verify'],
      allowed_origins: ['https://shop.example', 'http://localhost:5173'],
      visitor_rate_limit: 3,
      key_rate_limit: null,
      daily_cap: 500,
    });
    const listed = JSON.parse(await cli('keys', 'list', '--account', account.id, '--json')) as unknown[];
    expect(listed).toHaveLength(1);
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
