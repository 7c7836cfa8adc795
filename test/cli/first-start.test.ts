/**
 * Issue 25, "A first start that fails loses nothing": the README's quick start on a machine where
 * the port is taken. A port in use stops `serve` before anything is created; a start that fails
 * after the account exists (here: a keys file it must not overwrite) is completed by the next one
 * with new keys and a new owner link. Both with output to a pipe (keys file) and to a terminal
 * (a pseudo-terminal through util-linux `script`), as a person runs `npm start`.
 */
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanEnv,
  killAll,
  runCli,
  SCRIPT_COMMAND,
  spawnInTerminal,
  spawnServe,
  stopProcess,
} from '../kit/cli.js';
import { createTestSchema, TEST_SECRET_KEY, testBackends } from '../kit/store-harness.js';
import { waitFor } from '../kit/wait-for.js';

const PASSWORD = 'a first start that loses nothing 25';

/** A port another process listens on. */
async function takenPort(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function verifyStatus(url: string, key: string): Promise<number> {
  const res = await fetch(`${url}/v1/verify`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'anna@valid.example.com' }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** The owner sets a password at the link and is signed in (the accept-invite page's call). */
async function ownerSignsIn(url: string, link: string): Promise<number> {
  const token = link.slice(link.indexOf('#') + 1);
  const res = await fetch(`${url}/dashboard/api/invitations/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, password: PASSWORD }),
  });
  await res.arrayBuffer();
  return res.status;
}

interface Keys {
  account_id: string;
  live_key: string;
  test_key: string;
  owner_invitation_link: string | null;
}

/** What `serve` prints on a terminal, read until it says where it listens. */
async function terminalServe(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; text: string; url: string | null; code: number | null }> {
  const child = spawnInTerminal(['serve', ...args], env);
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  let code: number | null | undefined;
  child.once('exit', (c) => (code = c));
  await waitFor(
    'serve on a terminal to listen or exit',
    () => Promise.resolve(code !== undefined || /listening on http:\/\/\S+/.test(text) ? true : undefined),
    60_000,
  );
  const url = /listening on (http:\/\/[^\s]+)/.exec(text)?.[1] ?? null;
  return { child, text, url, code: code ?? null };
}

function keysOfText(text: string): Keys {
  const pick = (re: RegExp): string => {
    const found = re.exec(text)?.[1];
    if (found === undefined) throw new Error(`${String(re)} not in: ${text}`);
    return found;
  };
  return {
    account_id: pick(/account (acct_\w+)/),
    live_key: pick(/(svc_live_\w+)/),
    test_key: pick(/(svc_test_\w+)/),
    owner_invitation_link: pick(/(http:\/\/\S+\/accept-invite#\S+)/),
  };
}

describe('a first start that fails loses nothing (issue 25)', () => {
  const dirs: string[] = [];
  afterAll(() => {
    killAll();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const newDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'mailverdict-first-'));
    dirs.push(dir);
    return dir;
  };
  const baseEnv = { MAILVERDICT_LOG_LEVEL: 'warn', MAILVERDICT_EMBEDDED_WORKERS: 'false' };

  it.each(testBackends())(
    'on %s, a port in use stops the first start before anything exists; the next start on another port bootstraps (output to a pipe)',
    async (backend) => {
      const dir = newDir();
      const store: Record<string, string> =
        backend === 'sqlite'
          ? {}
          : {
              MAILVERDICT_DATABASE_URL: (await createTestSchema()).url,
              MAILVERDICT_SECRET_KEY: TEST_SECRET_KEY,
            };
      const env = cleanEnv({ ...baseEnv, ...store });
      const busy = await takenPort();
      try {
        const failed = await runCli(['serve', '--port', String(busy.port), '--data-dir', dir, '--json'], env);
        expect(failed.code).toBe(2);
        expect(failed.stderr).toContain(`cannot listen on 127.0.0.1:${busy.port}`);
        expect(failed.stderr).toContain('--port N (or MAILVERDICT_PORT=N)');
      } finally {
        await busy.close();
      }
      expect(existsSync(join(dir, 'bootstrap-keys.json'))).toBe(false);
      const none = await runCli(['accounts', 'list', '--data-dir', dir, '--json'], env);
      expect(none.code, none.stderr).toBe(0);
      expect(JSON.parse(none.stdout)).toEqual([]);

      const served = await spawnServe(['--port', '0', '--data-dir', dir], { env });
      try {
        expect(served.first.bootstrap_completed).toBe(false);
        const keys = served.keys!;
        expect(keys.account_id).toBe(served.first.account_id);
        expect(await verifyStatus(served.url, keys.test_key)).toBe(200);
        expect(await verifyStatus(served.url, keys.live_key)).toBe(200);
        // The operator's own account has no quota (plan `unlimited`).
        const usage = await fetch(`${served.url}/v1/account/usage`, {
          headers: { authorization: `Bearer ${keys.live_key}` },
        });
        expect(await usage.json()).toMatchObject({
          plan: 'unlimited',
          quota: { limit: null, used: 1, remaining: null },
        });
        expect(await ownerSignsIn(served.url, keys.owner_invitation_link)).toBe(200);
      } finally {
        expect((await served.stop()).code).toBe(0);
      }
      const listed = await runCli(['accounts', 'list', '--data-dir', dir, '--json'], env);
      expect(JSON.parse(listed.stdout)).toMatchObject([{ id: served.first.account_id, plan: 'unlimited' }]);

      // Delivered: the next start shows nothing and replaces nothing.
      const again = await spawnServe(['--port', '0', '--data-dir', dir], { env });
      try {
        expect(again.first.account_id).toBeUndefined();
        expect(await verifyStatus(again.url, served.keys!.test_key)).toBe(200);
      } finally {
        await again.stop();
      }
    },
    180_000,
  );

  it('completes a bootstrap whose start failed after creating the account: new keys, the unshown ones revoked (output to a pipe)', async () => {
    const dir = newDir();
    const env = cleanEnv(baseEnv);
    // A keys file of another store, which serve never overwrites: the start fails after creating the account.
    const foreign = join(dir, 'bootstrap-keys.json');
    writeFileSync(foreign, JSON.stringify({ account_id: 'acct_elsewhere' }), { mode: 0o600 });
    const failed = await runCli(['serve', '--port', '0', '--data-dir', dir, '--json'], env);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('holds the keys of another store');
    const [account] = JSON.parse(
      (await runCli(['accounts', 'list', '--data-dir', dir, '--json'], env)).stdout,
    ) as { id: string }[];
    const keysBefore = JSON.parse(
      (await runCli(['keys', 'list', '--account', account!.id, '--data-dir', dir, '--json'], env)).stdout,
    ) as { id: string; status: string }[];
    expect(keysBefore.map((k) => k.status)).toEqual(['active', 'active']);

    renameSync(foreign, join(dir, 'elsewhere.json'));
    const served = await spawnServe(['--port', '0', '--data-dir', dir], { env });
    try {
      expect(served.first).toMatchObject({ account_id: account!.id, bootstrap_completed: true });
      const keys = served.keys!;
      expect(await verifyStatus(served.url, keys.test_key)).toBe(200);
      expect(await ownerSignsIn(served.url, keys.owner_invitation_link)).toBe(200);
    } finally {
      await served.stop();
    }
    const keysAfter = JSON.parse(
      (await runCli(['keys', 'list', '--account', account!.id, '--data-dir', dir, '--json'], env)).stdout,
    ) as { id: string; status: string }[];
    expect(keysAfter.filter((k) => k.status === 'revoked').map((k) => k.id)).toEqual(
      keysBefore.map((k) => k.id),
    );
    expect(keysAfter.filter((k) => k.status === 'active')).toHaveLength(2);
    // The owner joined: `members reset` now gives a reset link, not the invitation's advice.
    const reset = await runCli(['members', 'reset', '--email', 'admin@localhost', '--data-dir', dir], env);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toContain('/reset-password#');
  }, 180_000);

  it.runIf(SCRIPT_COMMAND !== null)(
    'at a terminal: a port in use creates nothing, the next start prints the keys and the owner link, and completes an unfinished bootstrap',
    async () => {
      const dir = newDir();
      const env = cleanEnv(baseEnv);
      const busy = await takenPort();
      try {
        const failed = await terminalServe(['--port', String(busy.port), '--data-dir', dir], env);
        expect(failed.url).toBeNull();
        expect(failed.code).toBe(2);
        expect(failed.text).toContain(`cannot listen on 127.0.0.1:${busy.port}`);
      } finally {
        await busy.close();
      }
      const first = await terminalServe(['--port', '0', '--data-dir', dir], env);
      try {
        expect(first.url).not.toBeNull();
        expect(first.text).toContain('Created account');
        const keys = keysOfText(first.text);
        // A terminal gets the keys, never a file.
        expect(existsSync(join(dir, 'bootstrap-keys.json'))).toBe(false);
        expect(await verifyStatus(first.url!, keys.live_key)).toBe(200);
        expect(await ownerSignsIn(first.url!, keys.owner_invitation_link!)).toBe(200);
      } finally {
        await stopProcess(first.child);
      }

      // An unfinished bootstrap (the start failed after creating the account), completed at a terminal.
      const other = newDir();
      writeFileSync(join(other, 'bootstrap-keys.json'), '{"account_id":"acct_elsewhere"}', { mode: 0o600 });
      expect((await runCli(['serve', '--port', '0', '--data-dir', other, '--json'], env)).code).toBe(1);
      rmSync(join(other, 'bootstrap-keys.json'));
      const completed = await terminalServe(['--port', '0', '--data-dir', other], env);
      try {
        expect(completed.text).toContain('An earlier start made account');
        const keys = keysOfText(completed.text);
        expect(await verifyStatus(completed.url!, keys.test_key)).toBe(200);
        expect(await ownerSignsIn(completed.url!, keys.owner_invitation_link!)).toBe(200);
      } finally {
        await stopProcess(completed.child);
      }
    },
    240_000,
  );
  if (SCRIPT_COMMAND === null)
    console.warn('first-start: the terminal test needs util-linux `script` (apt-get install util-linux)');

  it('members reset names the invitation for an owner who never set a password; members invite prints a new owner link', async () => {
    const dir = newDir();
    const env = cleanEnv(baseEnv);
    const created = await runCli(
      ['accounts', 'create', '--email', 'owner@example.org', '--data-dir', dir, '--json'],
      env,
    );
    const account = JSON.parse(created.stdout) as { id: string };
    const reset = await runCli(['members', 'reset', '--email', 'owner@example.org', '--data-dir', dir], env);
    expect(reset.code).toBe(1);
    expect(reset.stderr).toContain('has never set a password');
    expect(reset.stderr).toContain(
      `mailverdict members invite --account ${account.id} --email owner@example.org   # owner`,
    );
    const invited = await runCli(
      [
        'members',
        'invite',
        '--account',
        account.id,
        '--email',
        'owner@example.org',
        '--data-dir',
        dir,
        '--json',
      ],
      env,
    );
    expect(invited.code, invited.stderr).toBe(0);
    const link = JSON.parse(invited.stdout) as { link: string; member: { role: string } };
    expect(link.member.role).toBe('owner');
    const served = await spawnServe(['--port', '0', '--data-dir', dir, '--no-bootstrap'], { env });
    try {
      expect(await ownerSignsIn(served.url, link.link)).toBe(200);
    } finally {
      await served.stop();
    }
  }, 120_000);
});
