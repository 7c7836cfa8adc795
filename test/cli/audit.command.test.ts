/**
 * `mailverdict audit`: the operator reads an account's security log, where the operator's own
 * CLI actions (account created with its owner's invitation, keys created and revoked, a member
 * removed) are recorded as the operator's; as JSON and as text, with --limit and --type.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditPage } from '../../src/services/accounts/audit.service.js';
import { runInProcess } from './in-process.js';

describe('mailverdict audit', { timeout: 60_000 }, () => {
  let dir: string;
  let accountId: string;
  let keyId: string;
  const cli = (...args: string[]) => runInProcess([...args, '--data-dir', dir]);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON printed by the command
  const json = async (...args: string[]): Promise<any> => JSON.parse(await cli(...args, '--json'));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailverdict-audit-'));
    accountId = (await json('accounts', 'create', '--email', 'ops@example.org')).id;
    keyId = (await json('keys', 'create', '--account', accountId, '--kind', 'test')).id;
    await json('keys', 'revoke', keyId);
    await json('members', 'invite', '--account', accountId, '--email', 'temp@example.org');
    await json('members', 'remove', '--account', accountId, '--email', 'temp@example.org');
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("prints the account's entries as JSON, the operator's actions as the operator's", async () => {
    const page = (await json('audit', '--account', accountId)) as AuditPage;
    const types = page.entries.map((e) => e.type).sort();
    expect(types).toEqual(
      ['invitation_created', 'invitation_created', 'invitation_revoked', 'key_created', 'key_revoked'].sort(),
    );
    expect(page.entries.every((e) => e.actor.kind === 'operator')).toBe(true);
    const revoked = page.entries.find((e) => e.type === 'key_revoked')!;
    expect(revoked.details).toEqual({ key_id: keyId });
    expect(page.next_before).toBeNull();
  });

  it('filters by type, limits and prints the cursor of the next page in text', async () => {
    const keys = await json('audit', '--account', accountId, '--type', 'key_created');
    expect(keys.entries).toHaveLength(1);
    const text = await cli('audit', '--account', accountId, '--limit', '2');
    const lines = text.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\S+ {2}\w+ {2}operator/);
    expect(lines[2]).toMatch(/^more: --before \S+$/);
    const rest = await json('audit', '--account', accountId, '--before', lines[2]!.split(' ')[2]!);
    expect(rest.entries).toHaveLength(3);
  });

  it('refuses an unknown account and an unknown event type', async () => {
    await expect(cli('audit', '--account', 'acct_nope')).rejects.toThrow();
    await expect(cli('audit', '--account', accountId, '--type', 'nonsense')).rejects.toThrow(
      /unknown event type/,
    );
  });
});
