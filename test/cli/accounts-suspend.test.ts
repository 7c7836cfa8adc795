/**
 * `mailverdict accounts suspend|resume` (docs/operators.md): the same change as the operator
 * console's, through services/operators/operator-accounts.service.ts: the account's key is refused while it is
 * suspended, and both actions are in its security log with the operator as actor.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { authenticateKey } from '../../src/services/keys/keys.service.js';
import { openDatabase } from '../../src/store/db.js';
import { runInProcess } from './in-process.js';

describe('mailverdict accounts suspend and resume', () => {
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

  async function suspension(key: string) {
    const db = openDatabase(loadConfig({ dataDir: dir }, {}));
    try {
      return (await authenticateKey(db, key)).accountSuspension;
    } finally {
      await db.destroy();
    }
  }

  it('suspends with a reason and resumes, in the security log, the key refused in between', async () => {
    const account = await json('accounts', 'create', '--email', 'late@example.org');
    const key = await json('keys', 'create', '--account', account.id, '--kind', 'live');

    const suspended = await json('accounts', 'suspend', '--id', account.id, '--reason', 'unpaid invoice');
    expect(suspended).toMatchObject({ id: account.id, suspended_reason: 'unpaid invoice' });
    expect(suspended.suspended_at).toEqual(expect.any(String));
    expect(await suspension(key.key)).toMatchObject({ reason: 'unpaid invoice' });
    expect(await cli('accounts', 'suspend', '--id', account.id)).toMatch(
      /is suspended: its keys are refused/,
    );

    expect(await cli('accounts', 'resume', '--id', account.id)).toMatch(/is active/);
    expect(await suspension(key.key)).toBeNull();
    expect(await json('accounts', 'show', account.id)).toMatchObject({
      suspended_at: null,
      suspended_reason: null,
    });

    const log = JSON.parse(await cli('audit', '--account', account.id, '--json')) as {
      entries: { type: string; actor: { kind: string } }[];
    };
    const ours = log.entries.filter((e) => e.type.startsWith('account_'));
    expect(ours.map((e) => [e.type, e.actor.kind])).toEqual([
      ['account_resumed', 'operator'],
      ['account_suspended', 'operator'],
      ['account_suspended', 'operator'],
    ]);
  });

  it('answers an unknown account with an error and changes nothing', async () => {
    await expect(cli('accounts', 'suspend', '--id', 'acct_nope')).rejects.toThrow(/no account acct_nope/);
  });
});
