/**
 * `mailverdict members`: the operator's way to let people into an account's dashboard. The links
 * it prints are used as a browser would (the dashboard's API through a real app on the same
 * store); `serve` on a brand-new store hands out the owner's link beside the bootstrap keys.
 */
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildHttpApp, createRuntime } from '../../src/runtime.js';
import { startMailSink } from '../kit/mail-sink.js';
import { runInProcess } from './in-process.js';
import { cleanEnv, spawnMailverdict } from '../kit/cli.js';

/** Each test hashes passwords with scrypt (100-200 ms idle, seconds on a loaded 2-core machine). */
const SLOW = { timeout: 60_000 };

describe('mailverdict members', SLOW, () => {
  let dir: string;
  let accountId: string;
  const store = () => ['--data-dir', dir];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON printed by the command
  const json = async (...args: string[]): Promise<any> =>
    JSON.parse(await runInProcess([...args, ...store(), '--json']));

  /** Uses a link's token against the dashboard's API of a real app on the same store. */
  async function accept(link: string, password: string, kind: 'invitations' | 'password-resets') {
    const runtime = await createRuntime(loadConfig({ dataDir: dir }, {}), {
      logger: pino({ level: 'silent' }),
    });
    const app = buildHttpApp(runtime.ctx);
    try {
      return await app.inject({
        method: 'POST',
        url: `/dashboard/api/${kind}/accept`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ token: link.split('#')[1], password }),
      });
    } finally {
      await app.close();
      await runtime.close();
    }
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailverdict-members-'));
    accountId = (await json('accounts', 'create', '--email', 'ops@example.org')).id;
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('invites an address and prints its one-time link, valid 24 hours', async () => {
    const before = Date.now();
    const out = await runInProcess([
      'members',
      'invite',
      '--account',
      accountId,
      '--email',
      'Ann@Example.org',
      '--public-base-url',
      'https://verify.example.net',
      ...store(),
    ]);
    const link = /(https:\/\/verify\.example\.net\/accept-invite#[A-Za-z0-9_-]{43})/.exec(out)?.[1];
    expect(link).toBeDefined();
    expect(out).toContain('invited ann@example.org');
    const expires = new Date(/until (\S+) \(24 h\)/.exec(out)![1]!).getTime();
    expect(expires - before).toBeGreaterThanOrEqual(24 * 3600_000 - 1000);
    expect(expires - before).toBeLessThanOrEqual(24 * 3600_000 + 60_000);
    const res = await accept(link!, 'a long password', 'invitations');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ member: { email: 'ann@example.org', role: 'member' } });
  });

  it("creates an account with its owner invited: the printed link makes the account's address its owner", async () => {
    // Issue 16, small defects: `accounts create` made an account nobody could sign in to.
    const out = await runInProcess([
      'accounts',
      'create',
      '--email',
      'Boss@Agency.example',
      '--public-base-url',
      'https://verify.example.net',
      ...store(),
    ]);
    expect(out).toMatch(/created account acct_\w+ \(Boss@Agency\.example, plan free\); its owner is invited/);
    const link = /(https:\/\/verify\.example\.net\/accept-invite#[A-Za-z0-9_-]{43})/.exec(out)?.[1];
    const res = await accept(link!, 'the boss chose this', 'invitations');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ member: { email: 'boss@agency.example', role: 'owner' } });
    const created = await json('accounts', 'create', '--email', 'second@agency.example');
    expect(created.owner_invitation).toMatchObject({
      member: { email: 'second@agency.example', role: 'owner', joined_at: null },
      emailed: false,
    });
    expect(created.owner_invitation.link).toMatch(/\/accept-invite#[A-Za-z0-9_-]{43}$/);
  });

  it('says that the link names the default host and port when no --public-base-url is given', async () => {
    // Issue 16, small defects: a server on another port got links to 8080 without a word.
    const args = ['members', 'invite', '--account', accountId, '--email'];
    const plain = await runInProcess([...args, 'default-base@example.org', ...store()]);
    expect(plain).toMatch(/^ {2}http:\/\/127\.0\.0\.1:8080\/accept-invite#/m);
    expect(plain).toContain('No --public-base-url was given');
    const given = await runInProcess([
      ...args,
      'given-base@example.org',
      '--public-base-url',
      'https://verify.example.net',
      ...store(),
    ]);
    expect(given).not.toContain('No --public-base-url');
  });

  it('lists the members, joined or invited', async () => {
    await json('members', 'invite', '--account', accountId, '--email', 'pending@example.org');
    const list = (await json('members', 'list', '--account', accountId)) as {
      email: string;
      joined_at: string | null;
    }[];
    const byEmail = Object.fromEntries(list.map((m) => [m.email, m.joined_at !== null]));
    expect(byEmail).toMatchObject({ 'ann@example.org': true, 'pending@example.org': false });
  });

  it('prints a reset link that sets a new password', async () => {
    const sent = await json('members', 'reset', '--email', 'ann@example.org');
    expect(sent.link).toMatch(/\/reset-password#[A-Za-z0-9_-]{43}$/);
    expect((await accept(sent.link, 'another long one', 'password-resets')).statusCode).toBe(200);
  });

  it('e-mails the link too when a relay is given', async () => {
    const sink = await startMailSink();
    try {
      const sent = await json(
        'members',
        'invite',
        '--account',
        accountId,
        '--email',
        'mailed@example.org',
        '--smtp-relay-url',
        sink.url,
      );
      expect(sent.emailed).toBe(true);
      expect(sink.messages[0]!.to).toEqual(['mailed@example.org']);
      expect(sink.messages[0]!.text).toContain(sent.link);
    } finally {
      await sink.close();
    }
  });

  it('removes a member, who then cannot use a link issued before', async () => {
    const sent = await json('members', 'invite', '--account', accountId, '--email', 'leaving@example.org');
    const removed = await json('members', 'remove', '--account', accountId, '--email', 'leaving@example.org');
    expect(removed.email).toBe('leaving@example.org');
    expect((await accept(sent.link, 'a long password', 'invitations')).statusCode).toBe(404);
  });

  it('refuses unknown accounts and members', async () => {
    await expect(
      runInProcess(['members', 'list', '--account', 'acct_nope', ...store()]),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(
      runInProcess(['members', 'reset', '--email', 'nobody@example.org', ...store()]),
    ).rejects.toMatchObject({ code: 'not_found' });
    await expect(
      runInProcess([
        'members',
        'remove',
        '--account',
        accountId,
        '--email',
        'nobody@example.org',
        ...store(),
      ]),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});

describe('mailverdict serve on a brand-new store', SLOW, () => {
  it('writes the owner’s invitation link beside the bootstrap keys, on the port it listens on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailverdict-serve-members-'));
    try {
      const serve = await spawnMailverdict(['serve', '--data-dir', dir, '--port', '0'], { env: cleanEnv() });
      const child = serve.child;
      const listening = JSON.parse(serve.line);
      const file = JSON.parse(readFileSync(listening.keys_file, 'utf8')) as {
        owner_email: string;
        owner_invitation_link: string;
      };
      expect(statSync(listening.keys_file).mode & 0o777).toBe(0o600);
      expect(file.owner_email).toBe('admin@localhost');
      expect(file.owner_invitation_link).toMatch(
        new RegExp(`^${listening.url}/accept-invite#[A-Za-z0-9_-]{43}$`),
      );
      const token = file.owner_invitation_link.split('#')[1];
      const shown = await fetch(`${listening.url}/dashboard/api/invitations/preview`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: listening.url },
        body: JSON.stringify({ token }),
      });
      expect(shown.status).toBe(200);
      expect(await shown.json()).toMatchObject({ email: 'admin@localhost' });
      child.kill('SIGTERM');
      expect((await once(child, 'exit'))[0]).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
