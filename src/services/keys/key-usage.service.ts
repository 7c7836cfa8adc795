/**
 * "Last used" of API keys (the dashboard's key list). Writing it on every request would add a
 * store write to the API's hot path, so each process writes a key's last use at most once per
 * `intervalMs` (a minute): the time shown is up to a minute behind per process, and with N
 * processes a key in constant use costs at most N small upserts a minute. The write happens
 * after the response is sent (api/app.ts, onResponse), never delays a request, and a failure is
 * only logged. It goes to `api_key_usage`, not `api_keys`: the key cache empties whenever
 * `api_keys` changes (services/keys/key-cache.ts).
 */
import type { Logger } from 'pino';
import { MINUTE, type Clock } from '../../clock.js';
import type { Executor } from '../../store/executor.js';
import { recordKeyUse } from '../../store/key-usage.store.js';

export interface KeyUseRecorder {
  /** Notes a use of the key now; writes it unless this process wrote one less than an interval ago. */
  record(keyId: string): void;
  /** Resolves once the writes started so far have ended (tests, shutdown). */
  settled(): Promise<void>;
}

/** Keys remembered at most between two sweeps of the ones not used for an interval. */
const MAX_REMEMBERED = 100_000;

export function createKeyUseRecorder(deps: {
  db: Executor;
  clock: Clock;
  logger: Pick<Logger, 'warn'>;
  intervalMs?: number;
}): KeyUseRecorder {
  const intervalMs = deps.intervalMs ?? MINUTE;
  const writtenAt = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  return {
    record(keyId) {
      const now = deps.clock.now();
      const last = writtenAt.get(keyId);
      if (last !== undefined && now.getTime() - last < intervalMs && now.getTime() >= last) return;
      if (writtenAt.size >= MAX_REMEMBERED) {
        for (const [id, at] of writtenAt) if (now.getTime() - at >= intervalMs) writtenAt.delete(id);
        if (writtenAt.size >= MAX_REMEMBERED) writtenAt.clear();
      }
      writtenAt.set(keyId, now.getTime());
      const write = recordKeyUse(deps.db, keyId, now.toISOString()).catch((err: unknown) => {
        // Tried again at the next use after the interval.
        deps.logger.warn({ err, key_id: keyId }, 'could not record the last use of an API key');
      });
      inFlight.add(write);
      void write.finally(() => inFlight.delete(write));
    },
    async settled() {
      await Promise.all([...inFlight]);
    },
  };
}
