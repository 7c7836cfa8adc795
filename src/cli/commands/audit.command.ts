/**
 * `mailverdict audit --account ID`: the operator reads an account's security log (docs/dashboard.md,
 * "Security log"), newest first; `--before` pages on with the cursor the previous page printed.
 */
import type { Command } from 'commander';
import { getAccount } from '../../services/accounts/accounts.service.js';
import { AUDIT_EVENT_TYPES, listAudit, type AuditEntryView } from '../../services/accounts/audit.service.js';
import { addCommonOptions, integerOption, print, withStore, type StoreFlags } from '../cli-support.js';

function who(e: AuditEntryView): string {
  return e.actor.kind === 'member' ? `${e.actor.email ?? ''} (${e.actor.member_id ?? ''})` : e.actor.kind;
}

function line(e: AuditEntryView): string {
  const from = e.client_ip === null ? '' : `  from ${e.client_ip}`;
  const details = Object.keys(e.details).length === 0 ? '' : `  ${JSON.stringify(e.details)}`;
  return `${e.at}  ${e.type}  ${who(e)}${from}${details}`;
}

export function registerAuditCommand(program: Command): void {
  addCommonOptions(
    program
      .command('audit')
      .description("Print an account's security log (sign-ins, members, keys, secrets), newest first.")
      .requiredOption('--account <account-id>', 'the account')
      .option('--type <event>', `only this event (${AUDIT_EVENT_TYPES.join(', ')})`)
      .option('--member <member-id>', 'only what this member did')
      .option('--before <cursor>', 'the page after the one that printed this cursor')
      .option('--limit <n>', 'entries to print (1 to 500)', '50'),
  ).action(
    async (
      flags: StoreFlags & { account: string; type?: string; member?: string; before?: string; limit: string },
    ) => {
      const page = await withStore(flags, async (db) => {
        await getAccount(db, flags.account);
        return listAudit(db, flags.account, {
          ...(flags.type === undefined ? {} : { type: flags.type }),
          ...(flags.member === undefined ? {} : { member: flags.member }),
          ...(flags.before === undefined ? {} : { before: flags.before }),
          limit: integerOption('--limit', flags.limit) ?? 50,
        });
      });
      print(flags.json, page, () =>
        [
          ...(page.entries.length === 0 ? ['no entries'] : page.entries.map(line)),
          ...(page.next_before === null ? [] : [`more: --before ${page.next_before}`]),
        ].join('\n'),
      );
    },
  );
}
