import type { Command } from 'commander';

// Placeholder until its issue lands: the command is listed but not available yet.
export function registerBatchCommand(program: Command): void {
  program
    .command('batch')
    .description('(not available yet)')
    .action(() => {
      process.stderr.write('mailverdict batch: not available yet\n');
      process.exitCode = 1;
    });
}
