/**
 * `mailverdict operators add|remove|list`: the people who run the service and sign in to its
 * operator console (docs/security.md, "Operators"). `add` makes the person when the address is
 * new and prints a one-time link (24 hours) where a person without a password chooses one; an
 * operator must then turn on two-factor sign-in before anything else. Each change is a structured
 * log line on stderr (the person's id, never the address). The link is a secret: printed, never
 * logged.
 */
import type { Command } from 'commander';
import pino from 'pino';
import { addOperator, listOperators, removeOperator } from '../../services/operators/operators.service.js';
import { systemClock } from '../../clock.js';
import { addCommonOptions, print, withStore, type StoreFlags } from '../cli-support.js';
import { linkJson, linkText, withMembers, type LinkFlags } from '../member-links.js';

function auditLogger() {
  return pino({ level: 'info' }, process.stderr);
}

export function registerOperatorsCommand(program: Command): void {
  const operators = program
    .command('operators')
    .description('Add, remove and list the operators, who sign in to the operator console.');

  addCommonOptions(
    operators
      .command('add')
      .description(
        'Make an address an operator (the person is made if new); prints a one-time link where a person without a password chooses one.',
      )
      .requiredOption('--email <address>', 'the person'),
  ).action(async (flags: LinkFlags) => {
    const { result, config } = await withMembers(flags, async (deps, config) => ({
      result: await addOperator({ ...deps, logger: auditLogger() }, flags.email),
      config,
    }));
    const { operator, added, link } = result;
    const json = { operator, added, ...(link === null ? { link: null } : linkJson(link)) };
    print(flags.json, json, () => {
      const what = added
        ? `${operator.email} is now an operator; they must turn on two-factor sign-in before anything else.`
        : `${operator.email} was an operator already.`;
      return link === null
        ? `${what} They sign in with their password at the dashboard.`
        : linkText(`${what} They choose a password at the link below.`, link, config);
    });
  });

  addCommonOptions(
    operators
      .command('remove')
      .description('Take the operator role from an address (the person and their accounts stay).')
      .requiredOption('--email <address>', 'the operator'),
  ).action(async (flags: StoreFlags & { email: string }) => {
    const removed = await withStore(flags, (db) =>
      removeOperator({ db, clock: systemClock, logger: auditLogger() }, flags.email),
    );
    print(flags.json, removed, () => `${removed.email} is no longer an operator`);
  });

  addCommonOptions(operators.command('list').description('List the operators.')).action(
    async (flags: StoreFlags) => {
      const list = await withStore(flags, (db) => listOperators({ db }));
      print(flags.json, list, () =>
        list.length === 0
          ? 'no operators'
          : list
              .map(
                (o) =>
                  `${o.person_id}  ${o.email}  operator since ${o.operator_since}${o.has_password ? '' : '  (no password yet)'}`,
              )
              .join('\n'),
      );
    },
  );
}
