/**
 * PostgreSQL's change feed and worker wake-ups: one connection per process, outside the pool,
 * LISTENing on the channels that the triggers of migration 0003 NOTIFY when a commit changes a
 * key or an account, queues a job or hands a chunk back. The payload is the table's schema, so
 * stores in other schemas of the same database are ignored.
 *
 * The change token is the epoch while the connection is LISTENing and null otherwise (before it
 * first connects, while it is down, after close): a cache keyed on it is never served across a
 * gap in which notifications could have been missed. The epoch moves on each change
 * notification, on each (re)connection, and when this process itself writes a watched table (its
 * own notification arrives a moment after its commit, so the driver reports the write at once).
 *
 * A connection that closes is seen at once; one that silently stops answering (a lost network
 * path) is caught by a heartbeat query, so stale answers last at most about
 * `heartbeatMs + heartbeatTimeoutMs` (4 s by default) in that case. The connection is reopened
 * with a bounded back-off for as long as the store is open.
 */
import pg from 'pg';
import type { ChangeWatch } from '../backend.js';

/** NOTIFYed when a commit changes `api_keys` or `accounts` (the tables the key cache reads). */
export const CHANGES_CHANNEL = 'mailverdict_changes';
/** NOTIFYed when a job is queued or a chunk is handed back unfinished: a worker has work. */
export const WORK_CHANNEL = 'mailverdict_jobs';

export interface NotificationOptions {
  /** The waits before successive reconnection attempts; the last one repeats. */
  retryDelaysMs?: readonly number[];
  /** How often the connection must answer a query to be trusted. */
  heartbeatMs?: number;
  /** How long that answer may take before the connection is given up. */
  heartbeatTimeoutMs?: number;
}

const DEFAULTS = {
  retryDelaysMs: [100, 200, 500, 1000, 2000, 5000],
  heartbeatMs: 2000,
  heartbeatTimeoutMs: 2000,
} satisfies Required<NotificationOptions>;

/** A connection attempt that takes longer than this fails and is retried after the back-off. */
const CONNECT_TIMEOUT_MS = 5000;
/** close() ends the connection politely for this long, then drops the socket (a dead path never answers). */
const CLOSE_TIMEOUT_MS = 1000;

export interface PostgresNotifications {
  readonly changes: ChangeWatch;
  /** See StoreBackend.onWork. */
  onWork(listener: () => void): () => void;
  /** This process has changed a watched table (reported by the driver, before its own NOTIFY arrives). */
  localChange(): void;
  /**
   * The driver is initialised: the connection may open from now on. (Kysely destroys only a
   * driver it has initialised, so a connection opened before that might never be closed.)
   */
  enable(): void;
  /** Closes the connection for good (the store is being destroyed). */
  close(): Promise<void>;
}

type State = 'idle' | 'connecting' | 'listening' | 'waiting' | 'closed';

/**
 * The listener for the database at `url`; it connects on first use (a change token asked for, or
 * a work listener added) once the driver is initialised, so commands that never cache nor wait
 * for work never open it.
 */
export function createPostgresNotifications(
  url: string,
  options: NotificationOptions = {},
): PostgresNotifications {
  const { retryDelaysMs, heartbeatMs, heartbeatTimeoutMs } = { ...DEFAULTS, ...options };
  const workListeners = new Set<() => void>();
  let state: State = 'idle';
  let enabled = false;
  let wanted = false;
  let client: pg.Client | null = null;
  let schema: string | null = null;
  let epoch = 0;
  let failures = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let heartbeatTimer: NodeJS.Timeout | undefined;

  function start(): void {
    wanted = true;
    if (enabled && state === 'idle') void connect();
  }

  async function connect(): Promise<void> {
    state = 'connecting';
    const c = new pg.Client({
      connectionString: url,
      keepAlive: true,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    client = c;
    c.on('error', () => dropped(c));
    c.on('end', () => dropped(c));
    c.on('notification', (n) => {
      if (n.payload !== schema) return;
      if (n.channel === CHANGES_CHANNEL) epoch++;
      else if (n.channel === WORK_CHANNEL) announceWork();
    });
    try {
      await c.connect();
      const { rows } = await c.query<{ schema: string | null }>(
        // Named after its schema, so that an operator (or a test) can tell it apart in pg_stat_activity.
        `select current_schema() as schema,
                set_config('application_name', 'mailverdict listener ' || coalesce(current_schema(), ''), false)`,
      );
      schema = rows[0]?.schema ?? null;
      await c.query(`listen ${CHANGES_CHANNEL}; listen ${WORK_CHANNEL}`);
    } catch {
      dropped(c);
      return;
    }
    if (client !== c) return; // dropped or closed meanwhile
    state = 'listening';
    failures = 0;
    // Whatever was committed before LISTEN took effect was never notified: caches start over,
    // and workers look for jobs queued meanwhile.
    epoch++;
    heartbeatTimer = setInterval(() => heartbeat(c), heartbeatMs);
    heartbeatTimer.unref();
    announceWork();
  }

  let heartbeatPending = false;
  function heartbeat(c: pg.Client): void {
    if (heartbeatPending) return;
    heartbeatPending = true;
    const deadline = setTimeout(() => dropped(c), heartbeatTimeoutMs);
    c.query('select 1').then(
      () => {
        heartbeatPending = false;
        clearTimeout(deadline);
      },
      () => {
        heartbeatPending = false;
        clearTimeout(deadline);
        dropped(c);
      },
    );
  }

  /** The connection `c` is gone or untrustworthy: no token until a new one is LISTENing. */
  function dropped(c: pg.Client): void {
    if (client !== c) return;
    client = null;
    clearInterval(heartbeatTimer);
    heartbeatPending = false;
    // Abandoned, not ended: a connection that stopped answering would never finish a polite end.
    c.connection.stream.destroy();
    if (state === 'closed') return;
    state = 'waiting';
    const delay = retryDelaysMs[Math.min(failures, retryDelaysMs.length - 1)] ?? 0;
    failures++;
    retryTimer = setTimeout(() => void connect(), delay);
    retryTimer.unref();
  }

  function announceWork(): void {
    for (const listener of [...workListeners]) listener();
  }

  return {
    changes: {
      changeToken() {
        start();
        return state === 'listening' ? epoch : null;
      },
    },
    onWork(listener) {
      start();
      workListeners.add(listener);
      return () => {
        workListeners.delete(listener);
      };
    },
    localChange() {
      epoch++;
    },
    enable() {
      enabled = true;
      if (wanted) start();
    },
    async close() {
      state = 'closed';
      clearTimeout(retryTimer);
      clearInterval(heartbeatTimer);
      workListeners.clear();
      const c = client;
      client = null;
      if (!c) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        c.end().catch(() => {}),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS))),
      ]);
      clearTimeout(timer);
      c.connection.stream.destroy();
    },
  };
}
