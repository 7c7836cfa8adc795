/**
 * The Redis connection of a process (ioredis), shared by the rate limiter, the engine's
 * coordination and /readyz, and the helpers its users share: Lua scripts as commands and log lines
 * that cannot flood.
 *
 * A command never waits for a connection: while Redis is unreachable every command fails at once
 * (no offline queue) and ioredis reconnects in the background. The rate limiter then fails open
 * and a worker sees the error, instead of requests hanging until Redis is back.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { SECOND } from '../clock.js';

/**
 * How long one command may take before it fails. A script round trip to Redis on loopback takes
 * about 0.1 ms; a Redis that needs a quarter of a second is as good as down for a rate limit that
 * every request waits on.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 250;

/** Default interval between two log lines about the same Redis failure. */
export const REDIS_WARN_INTERVAL_MS = 10 * SECOND;

export interface OpenRedisOptions {
  logger: Logger;
  /** Default REDIS_WARN_INTERVAL_MS. */
  warnIntervalMs?: number;
}

/**
 * Connects to `url` (redis:// or rediss://). Resolves once connected, or once the first attempt
 * failed (logged; ioredis goes on retrying with a back-off of at most 2 s): an unreachable Redis
 * does not stop start-up, /readyz reports it.
 */
export async function openRedis(url: string, options: OpenRedisOptions): Promise<Redis> {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    // ioredis waits this long for a socket to close after disconnect() before destroying it, even
    // for a socket that never connected (default 2 s, which would hold up shutdown).
    disconnectTimeout: 200,
    connectionName: 'mailverdict',
  });
  const mayWarn = onceEvery(options.warnIntervalMs ?? REDIS_WARN_INTERVAL_MS);
  // Emitted for every failed (re)connection attempt; without a listener ioredis prints each one.
  client.on('error', (err: Error) => {
    if (mayWarn()) options.logger.warn({ err }, 'Redis connection failed; retrying in the background');
  });
  try {
    await client.connect();
  } catch {
    // Already logged by the error listener.
  }
  return client;
}

/** Closes a client from openRedis: QUIT when connected, else stops reconnecting. */
export async function closeRedis(client: Redis): Promise<void> {
  if (client.status === 'ready') {
    try {
      await client.quit();
      return;
    } catch {
      // Lost while quitting: disconnect below.
    }
  }
  client.disconnect();
}

/** A script caller: the key, then the script's ARGV. */
export type LuaCommand = (key: string, ...args: (string | number)[]) => Promise<unknown>;

/**
 * Defines a one-key Lua script as a command of `client` (ioredis's defineCommand: EVALSHA, and
 * EVAL once when the server has lost the script, e.g. after a restart) and returns its caller.
 * Redis runs a script atomically; scripts read the time with TIME, so that the clocks of the
 * processes sharing a key never matter.
 */
export function luaCommand(client: Redis, name: string, lua: string): LuaCommand {
  client.defineCommand(name, { numberOfKeys: 1, lua });
  const command = (client as unknown as Record<string, LuaCommand>)[name]!;
  return (key, ...args) => command.call(client, key, ...args);
}

/** Epoch ms on the Redis server's clock, for scripts that compare leases and back-offs. */
export const LUA_NOW_MS = `
local function now_ms()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
`;

/** A gate that opens at most once per `intervalMs`: for log lines that could repeat on every request. */
export function onceEvery(intervalMs: number, now: () => number = () => performance.now()): () => boolean {
  let last = -Infinity;
  return () => {
    const t = now();
    if (t - last < intervalMs) return false;
    last = t;
    return true;
  };
}
