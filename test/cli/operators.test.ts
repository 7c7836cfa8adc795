/**
 * `mailverdict operators add|list|remove`: the operator identity the console is built on. The
 * link `add` prints is used as a browser would (a real app on the same store); each change is a
 * structured log line naming the person's id, never the address.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildHttpApp, createRuntime } from '../../src/runtime.js';
import { runInProcess } from './in-process.js';

describe('mailverdict operators', { timeout: 60_000 }, () => {
  let dir: string;
  const store = () => ['--data-dir', dir];

  async function withStderr(args: string[]): Promise<{ out: string; logged: string }> {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const out = await runInProcess([...args, ...store()]);
      return { out, logged: stderr.mock.calls.map((c) => String(c[0])).join('') };
    } finally {
      stderr.mockRestore();
    }
  }

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailverdict-operators-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds an operator with a one-time link to choose a password, lists and removes them', async () => {
    const { out, logged } = await withStderr([
      'operators',
      'add',
      '--email',
      'Ops@Example.org',
      '--public-base-url',
      'https://verify.example.net',
      '--json',
    ]);
    const added = JSON.parse(out) as {
      operator: { person_id: string; email: string };
      added: boolean;
      link: string;
    };
    expect(added.added).toBe(true);
    expect(added.operator.email).toBe('ops@example.org');
    expect(added.link).toMatch(/^https:\/\/verify\.example\.net\/reset-password#[\w-]{43}$/);
    expect(logged).toContain(added.operator.person_id);
    expect(logged).toContain('operator_added');
    expect(logged).not.toContain('ops@example.org');

    // The link sets the password; the operator, in no account, is signed in and must enrol.
    const runtime = await createRuntime(loadConfig({ dataDir: dir }, {}), {
      logger: pino({ level: 'silent' }),
    });
    const app = buildHttpApp(runtime.ctx);
    try {
      const res = await app.inject({
        method: 'POST',
        url: '/dashboard/api/password-resets/accept',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ token: added.link.split('#')[1], password: 'an operator passphrase' }),
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        person: { operator: true },
        account: null,
        two_factor: { required: true },
      });
    } finally {
      await app.close();
      await runtime.close();
    }

    const again = JSON.parse(
      (await withStderr(['operators', 'add', '--email', 'ops@example.org', '--json'])).out,
    );
    expect(again).toMatchObject({ added: false, link: null });
    const list = JSON.parse(await runInProcess(['operators', 'list', ...store(), '--json'])) as {
      email: string;
    }[];
    expect(list.map((o) => o.email)).toEqual(['ops@example.org']);

    const removed = await withStderr(['operators', 'remove', '--email', 'ops@example.org', '--json']);
    expect(JSON.parse(removed.out)).toMatchObject({ email: 'ops@example.org' });
    expect(removed.logged).toContain('operator_removed');
    expect(JSON.parse(await runInProcess(['operators', 'list', ...store(), '--json']))).toEqual([]);
    await expect(
      runInProcess(['operators', 'remove', '--email', 'ops@example.org', ...store()]),
    ).rejects.toMatchObject({ code: 'not_found' });
  });
});
