/**
 * Control characters from the command line (issue 16): refused where they would be stored, and
 * never printed raw into the operator's terminal when they are already in the store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/store/db.js';
import { runInProcess } from './in-process.js';

describe('control characters on the command line', () => {
  let dir: string;
  let accountId: string;
  const cli = (...args: string[]) => runInProcess([...args, '--data-dir', dir]);
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailverdict-control-'));
    accountId = (
      JSON.parse(await cli('accounts', 'create', '--email', 'ops@example.org', '--json')) as { id: string }
    ).id;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    [
      'an invited address',
      ['members', 'invite', '--account', '<account>', '--email', 'ann\u001b[2J@example.org'],
    ],
    ['a key name', ['keys', 'create', '--account', '<account>', '--kind', 'test', '--name', 'ci\u0007bell']],
    ['an account address', ['accounts', 'create', '--email', 'x\r\n@example.org']],
  ])('refuses %s holding a control character', async (_what, args) => {
    await expect(cli(...args.map((a) => (a === '<account>' ? accountId : a)))).rejects.toThrow(
      /control characters/,
    );
  });

  it('prints a stored value with control characters escaped, never raw', async () => {
    const db = openDatabase(loadConfig({ dataDir: dir }, {}));
    try {
      await db
        .insertInto('api_keys')
        .values({
          id: 'key_written_before',
          account_id: accountId,
          kind: 'test',
          name: 'old\u001b]0;pwned\u0007name',
          prefix: 'svc_test_',
          key_hash: 'f'.repeat(64),
          last4: 'abcd',
          scopes: 'verify',
          created_at: new Date().toISOString(),
        })
        .execute();
    } finally {
      await db.destroy();
    }
    const shown = await cli('accounts', 'show', accountId);
    expect(shown).toContain('old\\x1b]0;pwned\\x07name');
    // eslint-disable-next-line no-control-regex -- no raw control character may be printed
    expect(shown).not.toMatch(/[\u0000-\u0008\u000B-\u001F\u007F]/);
  });
});
