/**
 * The `mailverdict` program with every sub-command registered (cli/commands/), without parsing
 * anything: main.ts runs it, and docs/configuration.md is generated from its options.
 */
import { Command } from 'commander';
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

export function buildProgram(): Command {
  const program = new Command('mailverdict')
    .description('Self-hostable e-mail verification: engine, HTTP API and batch jobs.')
    .version('0.1.0')
    .exitOverride()
    .showHelpAfterError();
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
