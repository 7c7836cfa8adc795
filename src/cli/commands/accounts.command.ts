/**
 * `mailverdict accounts create|set-plan|suspend|resume|list|show`: account administration on the
 * local store. Changes go through services/operators/operator-accounts.service.ts, as the operator console's do, so
 * both record them in the account's security log the same way.
 */
import type { Command } from 'commander';
import { systemClock } from '../../clock.js';
import pino from 'pino';
import { getAccount, toAccountView, type AccountChanges } from '../../services/accounts/accounts.service.js';
import {
  CLI_OPERATOR,
  MAX_LISTED_ACCOUNTS,
  accountSummary,
  changeOperatorAccount,
  listOperatorAccounts,
} from '../../services/operators/operator-accounts.service.js';
import { createOwnedAccount } from '../../services/people/members.service.js';
import { PLAN_SLUGS, plansFromConfig } from '../../services/usage/plans.js';
import { addCommonOptions, integerOption, print, withStore, type StoreFlags } from '../cli-support.js';
import { linkJson, linkText, withMembers, type LinkFlags } from '../member-links.js';

type CommonFlags = StoreFlags;

/** One change of the console's (services/operators/operator-accounts.service.ts), made by the CLI. */
async function changeFromCli(flags: CommonFlags, id: string, changes: AccountChanges) {
  return withStore(flags, async (db, config) => {
    const deps = {
      db,
      clock: systemClock,
      plans: plansFromConfig(config),
      logger: pino({ level: 'warn' }, pino.destination(2)),
    };
    await changeOperatorAccount(deps, CLI_OPERATOR, id, changes);
    return toAccountView(await getAccount(db, id));
  });
}

export function registerAccountsCommand(program: Command): void {
  const accounts = program.command('accounts').description('Create, change and show accounts.');

  addCommonOptions(
    accounts
      .command('create')
      .description(
        "Create an account: prints its owner's one-time invitation link (the account's address), e-mailed too with a relay.",
      )
      .requiredOption('--email <address>', "the account's e-mail address")
      .option('--plan <slug>', `plan: ${PLAN_SLUGS.join(', ')}`, 'free')
      .option('--quota-limit <n>', "the account's own monthly quota, instead of its plan's")
      .option('--rate-limit <n>', "the account's own requests per second, instead of its plan's"),
  ).action(async (flags: LinkFlags & { plan: string; quotaLimit?: string; rateLimit?: string }) => {
    const { view, owner, config } = await withMembers(flags, async (deps, config) => {
      const created = await createOwnedAccount(deps, {
        email: flags.email,
        plan: flags.plan,
        quotaLimit: integerOption('--quota-limit', flags.quotaLimit) ?? null,
        rateLimit: integerOption('--rate-limit', flags.rateLimit) ?? null,
      });
      return {
        view: toAccountView(await getAccount(deps.db, created.accountId)),
        owner: created.owner,
        config,
      };
    });
    print(flags.json, { ...view, owner_invitation: linkJson(owner) }, () =>
      linkText(
        `created account ${view.id} (${view.email}, plan ${view.plan}); its owner is invited.`,
        owner,
        config,
      ),
    );
  });

  addCommonOptions(
    accounts
      .command('set-plan')
      .description("Change an account's plan (takes effect on its next request).")
      .argument('<account-id>')
      .requiredOption('--plan <slug>', `plan: ${PLAN_SLUGS.join(', ')}`),
  ).action(async (id: string, flags: CommonFlags & { plan: string }) => {
    const view = await changeFromCli(flags, id, { plan: flags.plan });
    print(flags.json, view, () => `account ${view.id} is now on plan ${view.plan}`);
  });

  addCommonOptions(
    accounts
      .command('suspend')
      .description(
        'Suspend an account: its keys get 403 account_suspended and its running jobs pause; its members can still sign in and see the reason.',
      )
      .requiredOption('--id <account-id>', 'the account')
      .option('--reason <text>', "why, shown to the account's members"),
  ).action(async (flags: CommonFlags & { id: string; reason?: string }) => {
    const view = await changeFromCli(flags, flags.id, { suspended: true, reason: flags.reason ?? null });
    print(
      flags.json,
      view,
      () =>
        `account ${view.id} is suspended${view.suspended_reason ? ` (${view.suspended_reason})` : ''}: ` +
        'its keys are refused and its jobs paused until `accounts resume`',
    );
  });

  addCommonOptions(
    accounts
      .command('resume')
      .description('Resume a suspended account: its keys work again and its paused jobs continue.')
      .requiredOption('--id <account-id>', 'the account'),
  ).action(async (flags: CommonFlags & { id: string }) => {
    const view = await changeFromCli(flags, flags.id, { suspended: false });
    print(flags.json, view, () => `account ${view.id} is active: its keys work and its jobs continue`);
  });

  addCommonOptions(
    accounts
      .command('list')
      .description(
        `List the accounts, newest first (at most ${MAX_LISTED_ACCOUNTS}): id, owner address, plan, usage, keys, members.`,
      ),
  ).action(async (flags: CommonFlags) => {
    const list = await withStore(flags, (db, config) =>
      listOperatorAccounts({ db, clock: systemClock, plans: plansFromConfig(config) }),
    );
    print(flags.json, list, () =>
      list.length === 0
        ? 'no accounts (`mailverdict accounts create --email ADDRESS` makes one)'
        : list
            .map(
              (a) =>
                `${a.id}  ${a.email}  ${a.plan}  ${a.usage.used}${a.usage.limit === null ? '' : `/${a.usage.limit}`} used  ` +
                `${a.keys} key${a.keys === 1 ? '' : 's'}  ${a.members} member${a.members === 1 ? '' : 's'}  ` +
                `created ${a.created_at}${a.suspended ? '  SUSPENDED' : ''}`,
            )
            .join('\n'),
    );
  });

  addCommonOptions(
    accounts
      .command('show')
      .description('Show an account with its usage and keys (never a secret).')
      .argument('<account-id>'),
  ).action(async (id: string, flags: CommonFlags) => {
    const summary = await withStore(flags, (db, config) =>
      accountSummary(db, systemClock, plansFromConfig(config), id),
    );
    print(flags.json, summary, () =>
      [
        `account ${summary.id} <${summary.email}>, plan ${summary.plan}, created ${summary.created_at}`,
        `period ${summary.usage.period_start} - ${summary.usage.period_end}: ` +
          (summary.usage.quota.limit === null
            ? `${summary.usage.quota.used} used (no quota)`
            : `${summary.usage.quota.used} of ${summary.usage.quota.limit} used`) +
          (summary.usage.overage.current_overage_count > 0
            ? `, ${summary.usage.overage.current_overage_count} overage`
            : ''),
        `rate limit ${summary.usage.rate_limit.per_second}/s, overage ${summary.usage.overage.enabled ? 'allowed' : 'not allowed'}`,
        'webhook signing secret: not shown here; the owner reveals it on the dashboard’s settings page (logged)',
        `keys: ${summary.keys.filter((k) => k.status === 'active').length} active of ${summary.keys.length}`,
        ...summary.keys.map(
          (k) => `  ${k.id}  ${k.display}  ${k.status}  ${k.scopes.join(',')}${k.name ? `  ${k.name}` : ''}`,
        ),
      ].join('\n'),
    );
  });
}
