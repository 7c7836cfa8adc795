import type { Command } from 'commander';

// Placeholder until its issue lands: the command is listed but not available yet.
export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description('(not available yet)')
    .action(() => {
      process.stderr.write('mailverdict worker: not available yet\n');
      process.exitCode = 1;
    });
}
