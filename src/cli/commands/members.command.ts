/**
 * `mailverdict members invite|reset|reset-2fa|remove|list`: who can sign in to an account's dashboard
 * (docs/dashboard.md). `invite` and `reset` print a one-time link (24 hours) where the person sets
 * a password; with an SMTP relay configured the link is e-mailed too. The link is a secret: it
 * is printed, never logged.
 */
import type { Command } from 'commander';
import pino from 'pino';
import { AppError } from '../../errors.js';
import { getAccount } from '../../services/accounts/accounts.service.js';
import { BY_OPERATOR } from '../../services/accounts/audit.service.js';
import { systemClock } from '../../clock.js';
import {
  inviteMember,
  listMembers,
  pendingInsteadOfReset,
  removeMemberByEmail,
  requestPasswordReset,
} from '../../services/people/members.service.js';
import { resetTwoFactorByEmail } from '../../services/people/two-factor.service.js';
import { addCommonOptions, print, withStore, type StoreFlags } from '../cli-support.js';
import { linkJson, linkText, withMembers, type LinkFlags } from '../member-links.js';

/**
 * What `members reset` says for a person who never set a password: a reset link would join no
 * account, a new invitation link does (the owner of a new account who lost their first link).
 */
function inviteInsteadText(instead: NonNullable<Awaited<ReturnType<typeof pendingInsteadOfReset>>>): string {
  return [
    `${instead.email} has never set a password, so a reset link would join no account. A new invitation link does`,
    '(the earlier one stops working):',
    ...instead.pending.map(
      (p) => `  mailverdict members invite --account ${p.account_id} --email ${instead.email}   # ${p.role}`,
    ),
  ].join('\n');
}

export function registerMembersCommand(program: Command): void {
  const members = program
    .command('members')
    .description("Invite, reset, remove and list the people who sign in to an account's dashboard.");

  addCommonOptions(
    members
      .command('invite')
      .description(
        'Invite an address to the account: prints the one-time link where the person sets a password. Again for an invitation not yet used (the owner’s too): a new link replaces the earlier one.',
      )
      .requiredOption('--account <account-id>', 'the account')
      .requiredOption('--email <address>', 'the person to invite'),
  ).action(async (flags: LinkFlags & { account: string }) => {
    const { sent, config } = await withMembers(flags, async (deps, config) => {
      return { sent: await inviteMember(deps, { accountId: flags.account, email: flags.email }), config };
    });
    print(flags.json, linkJson(sent), () =>
      linkText(`invited ${sent.email} to account ${flags.account}.`, sent, config),
    );
  });

  addCommonOptions(
    members
      .command('reset')
      .description(
        'Print a one-time link that sets a new password for a member (their sessions end when it is used). For someone who never set a password (an owner who lost the first link), it names the `members invite` that prints a new invitation link.',
      )
      .requiredOption('--email <address>', 'the member'),
  ).action(async (flags: LinkFlags) => {
    const { sent, config, instead } = await withMembers(flags, async (deps, config) => {
      const instead = await pendingInsteadOfReset(deps.db, flags.email);
      if (instead !== null) return { sent: null, config, instead };
      return { sent: await requestPasswordReset(deps, flags.email), config, instead };
    });
    if (instead !== null) throw new Error(inviteInsteadText(instead));
    if (sent === null)
      throw new AppError('not_found', `${flags.email.trim()} is not a member of any account`);
    print(flags.json, linkJson(sent), () => linkText(`password reset for ${sent.email}.`, sent, config));
  });

  addCommonOptions(
    members
      .command('reset-2fa')
      .description(
        "Clear a member's second factor (TOTP and recovery codes) and end their sessions, for a lost phone.",
      )
      .requiredOption('--email <address>', 'the member'),
  ).action(async (flags: StoreFlags & { email: string }) => {
    const { person, hadTwoFactor } = await withStore(flags, (db) =>
      resetTwoFactorByEmail(db, systemClock, flags.email),
    );
    // Also a log line: the person's id, never the address.
    pino({ level: 'info' }, process.stderr).info(
      { person_id: person.id, had_two_factor: hadTwoFactor },
      'second factor reset by the operator',
    );
    const result = { person: { id: person.id, email: person.email }, had_two_factor: hadTwoFactor };
    print(flags.json, result, () =>
      hadTwoFactor
        ? `cleared the second factor of ${person.email}; their sessions ended and they sign in with the password alone.`
        : `${person.email} had no second factor; their sessions ended.`,
    );
  });

  addCommonOptions(
    members
      .command('remove')
      .description(
        'Remove a member from the account (the person stays, with their other accounts). The owner cannot be removed.',
      )
      .requiredOption('--account <account-id>', 'the account')
      .requiredOption('--email <address>', 'the member'),
  ).action(async (flags: StoreFlags & { account: string; email: string }) => {
    const removed = await withStore(flags, (db) =>
      removeMemberByEmail(db, systemClock, { accountId: flags.account, email: flags.email }, BY_OPERATOR),
    );
    print(flags.json, removed, () => `removed ${removed.email} from account ${flags.account}`);
  });

  addCommonOptions(
    members
      .command('list')
      .description("List an account's members (joined, or invited and not yet joined).")
      .requiredOption('--account <account-id>', 'the account'),
  ).action(async (flags: StoreFlags & { account: string }) => {
    const list = await withStore(flags, async (db) => {
      await getAccount(db, flags.account);
      return listMembers(db, flags.account);
    });
    print(flags.json, list, () =>
      list.length === 0
        ? 'no members'
        : list
            .map(
              (m) =>
                `${m.id}  ${m.email}  ${m.role}  ${m.joined_at === null ? 'invited' : `joined ${m.joined_at}`}`,
            )
            .join('\n'),
    );
  });
}
