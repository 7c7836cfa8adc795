/**
 * The container image's HEALTHCHECK (Dockerfile, docs/deploy.md): exits 0 when GET /readyz of
 * this container's `serve` answers 2xx (the store and, when configured, Redis answer), 1
 * otherwise. A script of its own, not a `mailverdict` command: it runs every 30 s and loads
 * nothing but Node.
 */
const host = process.env.MAILVERDICT_HOST ?? '0.0.0.0';
const port = process.env.MAILVERDICT_PORT ?? '8080';

/** The address to connect to for a listening address: a wildcard's is loopback. */
function target(listening: string): string {
  if (listening === '0.0.0.0' || listening === '') return '127.0.0.1';
  if (listening === '::') return '[::1]';
  return listening.includes(':') ? `[${listening}]` : listening;
}

try {
  const res = await fetch(`http://${target(host)}:${port}/readyz`, { signal: AbortSignal.timeout(4000) });
  process.exit(res.ok ? 0 : 1);
} catch {
  process.exit(1);
}
