/**
 * The `mailverdict` program with its sub-commands registered (cli/commands/), without parsing
 * anything: main.ts runs it with the commands its arguments need, and docs/configuration.md is
 * generated from every command's options.
 */
import { Command, Help } from 'commander';

/**
 * Every sub-command, in the order of `--help`, with the module that registers it. A module is
 * imported only when its command is wanted: a child process of the CLI spent about 0.9 s of CPU
 * loading the whole server (Fastify, the engine, every service) for `--version` or `keys list`;
 * now `keys list` loads the keys command's code and what it imports, and only `serve`, `worker`
 * and the full help load everything.
 */
const COMMANDS: ReadonlyArray<{ name: string; register: () => Promise<(program: Command) => void> }> = [
  {
    name: 'verify',
    register: async () => (await import('./commands/verify.command.js')).registerVerifyCommand,
  },
  { name: 'serve', register: async () => (await import('./commands/serve.command.js')).registerServeCommand },
  {
    name: 'accounts',
    register: async () => (await import('./commands/accounts.command.js')).registerAccountsCommand,
  },
  { name: 'keys', register: async () => (await import('./commands/keys.command.js')).registerKeysCommand },
  {
    name: 'members',
    register: async () => (await import('./commands/members.command.js')).registerMembersCommand,
  },
  {
    name: 'operators',
    register: async () => (await import('./commands/operators.command.js')).registerOperatorsCommand,
  },
  { name: 'batch', register: async () => (await import('./commands/batch.command.js')).registerBatchCommand },
  {
    name: 'worker',
    register: async () => (await import('./commands/worker.command.js')).registerWorkerCommand,
  },
  {
    name: 'migrate',
    register: async () => (await import('./commands/migrate.command.js')).registerMigrateCommand,
  },
  { name: 'store', register: async () => (await import('./commands/store.command.js')).registerStoreCommand },
  {
    name: 'doctor',
    register: async () => (await import('./commands/doctor.command.js')).registerDoctorCommand,
  },
  {
    name: 'egresses',
    register: async () => (await import('./commands/egresses.command.js')).registerEgressesCommand,
  },
  { name: 'audit', register: async () => (await import('./commands/audit.command.js')).registerAuditCommand },
  {
    name: 'secrets',
    register: async () => (await import('./commands/secrets.command.js')).registerSecretsCommand,
  },
  { name: 'mcp', register: async () => (await import('./commands/mcp.command.js')).registerMcpCommand },
];

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

/**
 * The commands `argv` (as process.argv: node, script, then the arguments) needs: the one it names;
 * none for `--version` alone; all of them otherwise (`--help`, no command, a mistyped command,
 * where commander lists or suggests the commands).
 */
export function commandsFor(argv: readonly string[]): readonly string[] | 'all' {
  const first = argv[2];
  if (argv.length === 3 && (first === '--version' || first === '-V')) return [];
  return COMMANDS.some((c) => c.name === first) ? [first!] : 'all';
}

/**
 * The `mailverdict` program with the sub-commands `only` names registered (default every one),
 * without parsing anything.
 */
export async function buildProgram(only: readonly string[] | 'all' = 'all'): Promise<Command> {
  const program = new Command('mailverdict')
    .description('Self-hostable e-mail verification: engine, HTTP API and batch jobs.')
    .version('0.1.0')
    .exitOverride()
    .configureHelp({ formatItem: formatHelpItem })
    // A hint, not the whole help: a command's 60 lines of options bury the one error (issue 25).
    .showHelpAfterError('(add --help to see the options)');
  const wanted = COMMANDS.filter((c) => only === 'all' || only.includes(c.name));
  // Imported side by side, registered in the table's order (the order of `--help`).
  const registers = await Promise.all(wanted.map((c) => c.register()));
  wanted.forEach((command, i) => {
    registers[i]!(program);
    // The table names each module's command; a module that registers another name is a mistake here.
    if (!program.commands.some((c) => c.name() === command.name))
      throw new Error(`cli/program.ts: the module for "${command.name}" registered no such command`);
  });
  return program;
}
