/**
 * `mailverdict keys create|revoke|list`: API keys of an account. The secret is printed only by
 * `create`, once; nothing else can show it again.
 */
import type { Command } from 'commander';
import { systemClock } from '../../clock.js';
import { recordAudit } from '../../services/audit.service.js';
import { SCOPES, createKey, listKeys, revokeKey } from '../../services/keys.service.js';
import { addCommonOptions, print, withStore, type StoreFlags } from '../cli-support.js';

type CommonFlags = StoreFlags;

export function registerKeysCommand(program: Command): void {
  const keys = program.command('keys').description('Create, revoke and list API keys.');

  addCommonOptions(
    keys
      .command('create')
      .description('Create an API key and print its secret (the only time it is shown).')
      .requiredOption('--account <account-id>', 'the account the key belongs to')
      .requiredOption(
        '--kind <kind>',
        'live (real verifications, counted) or test (fixed results, not counted)',
      )
      .option('--scopes <list>', `comma-separated scopes (default all: ${SCOPES.join(',')})`)
      .option('--name <name>', 'a label for the key'),
  ).action(async (flags: CommonFlags & { account: string; kind: string; scopes?: string; name?: string }) => {
    const created = await withStore(flags, async (db) => {
      const made = await createKey(db, systemClock, {
        accountId: flags.account,
        kind: flags.kind,
        ...(flags.scopes === undefined
          ? {}
          : {
              scopes: flags.scopes
                .split(',')
                .map((s) => s.trim())
                .filter((s) => s !== ''),
            }),
        name: flags.name ?? null,
      });
      await recordAudit(db, systemClock, {
        accountId: made.record.account_id,
        type: 'key_created',
        actor: { kind: 'operator' },
        details: { key_id: made.record.id, kind: made.record.kind },
      });
      return made;
    });
    const { id, ...record } = created.record;
    const out = { id, key: created.key, ...record };
    print(flags.json, out, () =>
      [
        `created ${out.kind} key ${out.id} (scopes ${out.scopes.join(',')})`,
        `  ${out.key}`,
        'Store it now: it is not shown again.',
      ].join('\n'),
    );
  });

  addCommonOptions(
    keys
      .command('revoke')
      .description('Revoke a key; it is refused from the next request on.')
      .argument('<key-id>'),
  ).action(async (id: string, flags: CommonFlags) => {
    const view = await withStore(flags, async (db) => {
      const revoked = await revokeKey(db, systemClock, id);
      await recordAudit(db, systemClock, {
        accountId: revoked.account_id,
        type: 'key_revoked',
        actor: { kind: 'operator' },
        details: { key_id: revoked.id },
      });
      return revoked;
    });
    print(flags.json, view, () => `revoked key ${view.id} (${view.display}) at ${view.revoked_at ?? ''}`);
  });

  addCommonOptions(
    keys
      .command('list')
      .description("List an account's keys (never their secrets).")
      .requiredOption('--account <account-id>', 'the account'),
  ).action(async (flags: CommonFlags & { account: string }) => {
    const list = await withStore(flags, (db) => listKeys(db, flags.account));
    print(flags.json, list, () =>
      list.length === 0
        ? 'no keys'
        : list
            .map(
              (k) =>
                `${k.id}  ${k.display}  ${k.kind}  ${k.status}  ${k.scopes.join(',')}${k.name ? `  ${k.name}` : ''}`,
            )
            .join('\n'),
    );
  });
}
