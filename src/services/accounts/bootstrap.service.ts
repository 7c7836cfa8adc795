/**
 * First start on a data directory without an account: one account with a live and a test key,
 * and its owner's invitation to the dashboard (the account's address; docs/dashboard.md).
 *
 * A first start can fail after the account exists and before anyone saw its keys (the port is
 * taken, the keys file cannot be written, the process is killed): issue 25. The `bootstrap` row
 * remembers whether the keys reached someone; a start that finds them undelivered completes the
 * bootstrap with new keys (the unshown ones are revoked: nobody can hold them) and a new owner
 * link, so that no start leaves an account nobody can use.
 */
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import {
  claimBootstrap,
  findBootstrap,
  insertBootstrap,
  markBootstrapDelivered,
} from '../../store/bootstrap.store.js';
import type { Executor } from '../../store/executor.js';
import type { BootstrapDelivery } from '../../store/schema/bootstrap.schema.js';
import {
  createAccount,
  getAccount,
  hasAnyAccount,
  toAccountView,
  type AccountView,
} from './accounts.service.js';
import { createKey, revokeKey, type KeyView } from '../keys/keys.service.js';
import { issueInvitation, type IssuedLink } from '../people/members.service.js';

export type { BootstrapDelivery };

export interface Bootstrap {
  account: AccountView;
  live: { key: string; record: KeyView };
  test: { key: string; record: KeyView };
  /**
   * The owner's one-time invitation (services/people/members.service.ts memberLink makes the link); null
   * when the owner has joined already (they sign in with their password).
   */
  owner: IssuedLink | null;
  /** True when this start completed a bootstrap that an earlier start made and never showed. */
  completed: boolean;
  /** Pass to `bootstrapDelivered` once the keys were shown or written. */
  generation: number;
}

export interface BootstrapOptions {
  /** The owner's address. */
  email?: string;
  /** The plan of the operator's own account (config `bootstrapPlan`; default `free`). */
  plan?: string;
}

/**
 * Creates the first account and its two keys when the store has no account yet, or completes an
 * earlier start's bootstrap whose keys never reached anyone; null when there is nothing to do (a
 * store in use, or another process doing it at the same moment).
 */
export async function bootstrapFirstAccount(
  db: Executor,
  clock: Clock,
  options: BootstrapOptions = {},
): Promise<Bootstrap | null> {
  try {
    return await db.transaction().execute(async (trx) => {
      const row = await findBootstrap(trx);
      if (row === undefined) {
        // A store made before the bootstrap row existed, or accounts made with `accounts create`.
        if (await hasAnyAccount(trx)) return null;
        return { ...(await createFirst(trx, clock, options)), completed: false, generation: 1 };
      }
      if (row.delivered_at !== null) return null;
      const account = await getAccount(trx, row.account_id);
      // The unshown keys: nobody holds them, so nothing breaks when they stop working.
      for (const id of [row.live_key_id, row.test_key_id]) await revokeKey(trx, clock, id);
      const keys = await bootstrapKeys(trx, clock, account.id);
      if (
        !(await claimBootstrap(trx, row.generation, {
          live_key_id: keys.live.record.id,
          test_key_id: keys.test.record.id,
        }))
      )
        throw new ClaimedElsewhere();
      return {
        account: toAccountView(account),
        ...keys,
        owner: await ownerInvitation(trx, clock, account.id, account.email),
        completed: true,
        generation: row.generation + 1,
      };
    });
  } catch (err) {
    // Another process on the same store made (or completed) it in the same moment: its output has the keys.
    if (err instanceof ClaimedElsewhere) return null;
    throw err;
  }
}

/** Records that the keys of `bootstrap` were shown on a terminal or written to the keys file. */
export async function bootstrapDelivered(
  db: Executor,
  clock: Clock,
  bootstrap: Pick<Bootstrap, 'generation'>,
  to: BootstrapDelivery,
): Promise<boolean> {
  return markBootstrapDelivered(db, bootstrap.generation, clock.now().toISOString(), to);
}

class ClaimedElsewhere extends Error {}

async function createFirst(trx: Executor, clock: Clock, options: BootstrapOptions) {
  const email = options.email ?? 'admin@localhost';
  const account = await createAccount(trx, clock, { email, plan: options.plan ?? 'free' });
  const keys = await bootstrapKeys(trx, clock, account.id);
  // A second process doing the same meets the row's primary key and gives way (its work rolls back).
  const inserted = await insertBootstrap(trx, {
    account_id: account.id,
    live_key_id: keys.live.record.id,
    test_key_id: keys.test.record.id,
    created_at: clock.now().toISOString(),
  });
  if (!inserted) throw new ClaimedElsewhere();
  const owner = await issueInvitation(trx, clock, { accountId: account.id, email, role: 'owner' });
  return { account: toAccountView(account), ...keys, owner };
}

async function bootstrapKeys(trx: Executor, clock: Clock, accountId: string) {
  const live = await createKey(trx, clock, { accountId, kind: 'live', name: 'bootstrap live key' });
  const test = await createKey(trx, clock, { accountId, kind: 'test', name: 'bootstrap test key' });
  return { live, test };
}

/** A new owner link (the earlier ones stop working); null when the owner joined already. */
async function ownerInvitation(
  trx: Executor,
  clock: Clock,
  accountId: string,
  email: string,
): Promise<IssuedLink | null> {
  try {
    return await issueInvitation(trx, clock, { accountId, email, role: 'owner' });
  } catch (err) {
    if (err instanceof AppError && err.code === 'member_exists') return null;
    throw err;
  }
}
