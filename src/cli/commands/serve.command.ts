import type { Command } from 'commander';

// Placeholder until its issue lands: the command is listed but not available yet.
export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('(not available yet)')
    .action(() => {
      process.stderr.write('mailverdict serve: not available yet\n');
      process.exitCode = 1;
    });
}
