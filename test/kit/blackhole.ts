/**
 * Addresses whose TCP connect never completes, with real sockets on loopback: a listener in a
 * child process that is stopped (SIGSTOP) before it accepts anything, its accept queue filled by a
 * few connections; the kernel then drops further SYNs, as a firewall that drops them does. For
 * Happy Eyeballs (src/engine/net/happy-eyeballs.ts): one address family that stays silent.
 */
import { spawn } from 'node:child_process';
import net from 'node:net';

export interface Blackhole {
  /** Destroys the filling connections and kills the listener (by its pid). */
  close(): void;
}

const LISTENER = `
const net = require('node:net');
const hosts = process.argv[1].split(',');
let ready = 0;
for (const host of hosts)
  net.createServer().listen({ host, port: Number(process.argv[2]), backlog: 1 }, () => {
    if (++ready === hosts.length) console.log('ready');
  });
setTimeout(() => process.exit(0), 10 * 60_000);
`;

/** Makes a connect to each of `hosts` on `port` hang; throws when the kernel does not hold it. */
export async function startBlackhole(hosts: readonly string[], port: number): Promise<Blackhole> {
  const child = spawn(process.execPath, ['-e', LISTENER, hosts.join(','), String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`blackhole listener exited (${code})`)));
    child.stdout.once('data', () => resolve());
  });
  child.kill('SIGSTOP');
  // The accept queue (backlog + 1) fills; the kernel drops the SYNs of every later connect.
  const fillers = hosts.flatMap((host) =>
    Array.from({ length: 4 }, () => net.connect({ host, port }).on('error', () => undefined)),
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  const close = (): void => {
    for (const socket of fillers) socket.destroy();
    child.kill('SIGKILL');
  };
  // The environment must produce the hang, or what uses it would prove nothing.
  const probes = hosts.map((host) => net.connect({ host, port }).on('error', () => undefined));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const completed = probes.filter((probe) => !probe.connecting).length;
  for (const probe of probes) probe.destroy();
  if (completed > 0) {
    close();
    throw new Error(`a connect to the blackhole completed on port ${port}: it does not hold here`);
  }
  return { close };
}
