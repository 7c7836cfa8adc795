/**
 * The `mailverdict` program with every sub-command registered (cli/commands/), without parsing
 * anything: main.ts runs it, and docs/configuration.md is generated from its options.
 */
import { Command, Help } from 'commander';
import { registerVerifyCommand } from './commands/verify.command.js';
import { registerServeCommand } from './commands/serve.command.js';
import { registerAccountsCommand } from './commands/accounts.command.js';
import { registerKeysCommand } from './commands/keys.command.js';
import { registerMembersCommand } from './commands/members.command.js';
import { registerOperatorsCommand } from './commands/operators.command.js';
import { registerBatchCommand } from './commands/batch.command.js';
import { registerWorkerCommand } from './commands/worker.command.js';
import { registerMigrateCommand } from './commands/migrate.command.js';
import { registerStoreCommand } from './commands/store.command.js';
import { registerDoctorCommand } from './commands/doctor.command.js';
import { registerEgressesCommand } from './commands/egresses.command.js';
import { registerAuditCommand } from './commands/audit.command.js';
import { registerSecretsCommand } from './commands/secrets.command.js';
import { registerMcpCommand } from './commands/mcp.command.js';

/** Descriptions narrower than this go on their own lines below the flag instead. */
const MIN_DESCRIPTION_WIDTH = 40;

/**
 * One option or command of `--help`, wrapped to the terminal (80 columns when the output is not
 * one). Commander wraps a description beside its flag only when that column is wide enough;
 * the settings' long flags leave it too narrow, so there the description goes below the flag,
 * indented and wrapped to the whole width, with a blank line before the next item.
 */
function formatHelpItem(
  this: Help,
  term: string,
  termWidth: number,
  description: string,
  helper: Help,
): string {
  const width = helper.helpWidth ?? 80;
  if (!description || width - termWidth - 4 >= MIN_DESCRIPTION_WIDTH)
    return Help.prototype.formatItem.call(this, term, termWidth, description, helper);
  const indent = '      ';
  const body = helper.boxWrap(description, width - indent.length);
  return `  ${term}\n${body
    .split('\n')
    .map((line) => indent + line)
    .join('\n')}\n`;
}

export function buildProgram(): Command {
  const program = new Command('mailverdict')
    .description('Self-hostable e-mail verification: engine, HTTP API and batch jobs.')
    .version('0.1.0')
    .exitOverride()
    .configureHelp({ formatItem: formatHelpItem })
    // A hint, not the whole help: a command's 60 lines of options bury the one error (issue 25).
    .showHelpAfterError('(add --help to see the options)');
  registerVerifyCommand(program);
  registerServeCommand(program);
  registerAccountsCommand(program);
  registerKeysCommand(program);
  registerMembersCommand(program);
  registerOperatorsCommand(program);
  registerBatchCommand(program);
  registerWorkerCommand(program);
  registerMigrateCommand(program);
  registerStoreCommand(program);
  registerDoctorCommand(program);
  registerEgressesCommand(program);
  registerAuditCommand(program);
  registerSecretsCommand(program);
  registerMcpCommand(program);
  return program;
}
