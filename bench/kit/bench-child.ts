/**
 * Fake mail hosts and DNS server in a child process, so that their CPU time is not the engine's.
 * The child (bench/fake-mta-pipelining.ts, bench/kit/postfix-like-child.ts) takes its world as
 * JSON in argv[2], sends `{ready: {port, dns}}` once listening, answers 'stats' with `{stats}`,
 * and obeys 'reset' and 'close'.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface BenchChild<Stats> {
  port: number;
  /** "127.0.0.1:PORT" of the fake DNS server. */
  dns: string;
  stats(): Promise<Stats>;
  reset(): void;
  close(): Promise<void>;
}

export async function startBenchChild<Stats>(script: URL, world: unknown): Promise<BenchChild<Stats>> {
  const child = fork(fileURLToPath(script), [JSON.stringify(world)], {
    execArgv: ['--import', 'tsx'],
    stdio: 'inherit',
  });
  const ready = await new Promise<{ port: number; dns: string }>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bench child exited with ${code}`)));
    child.on('message', (message: { ready?: { port: number; dns: string } }) => {
      if (message.ready) resolve(message.ready);
    });
  });
  return {
    ...ready,
    stats: () =>
      new Promise((resolve) => {
        const onMessage = (message: { stats?: Stats }): void => {
          if (!message.stats) return;
          child.off('message', onMessage);
          resolve(message.stats);
        };
        child.on('message', onMessage);
        child.send('stats');
      }),
    reset: () => child.send('reset'),
    close: async () => {
      child.send('close');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
