/**
 * A publishable key's daily cap, told to its owner (issue 26): the one request of a day that
 * reaches a key's cap records `publishable_cap_reached` in the account's security log and, with a
 * relay, e-mails the account's address; the overview shows every key at its cap today.
 */
import type { Clock } from '../../clock.js';
import type { PublishableDefaults } from '../../config.js';
import { getAccountEmail } from '../../store/delivery.store.js';
import type { Executor } from '../../store/executor.js';
import { findKeyById, publishableKeyDays } from '../../store/key.store.js';
import { getAccount } from '../accounts/accounts.service.js';
import { recordAudit } from '../accounts/audit.service.js';
import type { CapMailer } from './key-cap-mail.js';
import { toKeyView } from './keys.service.js';
import { accountLimits, type PlanTable } from '../usage/plans.js';
import { dailyCapCost, effectiveLimits, type DailyCapCost } from './publishable-keys.js';

/** A publishable key at its daily cap today (the overview's notice). */
export interface CapNotice {
  key_id: string;
  name: string | null;
  display: string;
  daily_cap: number;
  /** The UTC day, YYYY-MM-DD. */
  day: string;
}

export interface CapDeps {
  db: Executor;
  clock: Clock;
  plans: PlanTable;
  defaults: PublishableDefaults;
}

/**
 * The account's monthly quota, which a key without a cap of its own takes its cap from; null for
 * an account without one (the `unlimited` plan), whose keys take `--publishable-daily-cap`.
 */
export async function accountMonthlyQuota(
  db: Executor,
  plans: PlanTable,
  accountId: string,
): Promise<number | null> {
  const account = await getAccount(db, accountId);
  return accountLimits(plans, account).quotaLimit;
}

/**
 * What one day at a publishable key's cap costs its account (`ownCap`: the key's own cap, null
 * for the default), for the keys page and `mailverdict keys`.
 */
export async function keyCapCost(
  deps: Pick<CapDeps, 'db' | 'plans' | 'defaults'>,
  accountId: string,
  ownCap: number | null,
): Promise<DailyCapCost> {
  return dailyCapCost(ownCap, deps.defaults, await accountMonthlyQuota(deps.db, deps.plans, accountId));
}

/** The account's active publishable keys that have reached their daily cap today (UTC). */
export async function capNotices(deps: CapDeps, accountId: string): Promise<CapNotice[]> {
  const day = deps.clock.now().toISOString().slice(0, 10);
  const rows = await publishableKeyDays(deps.db, accountId, day);
  if (rows.length === 0) return [];
  const quota = await accountMonthlyQuota(deps.db, deps.plans, accountId);
  const notices: CapNotice[] = [];
  for (const row of rows) {
    const view = toKeyView(row);
    const cap = effectiveLimits(
      { visitorRateLimit: null, keyRateLimit: null, dailyCap: view.daily_cap },
      deps.defaults,
      quota,
    ).dailyCap;
    if (row.used >= cap)
      notices.push({ key_id: view.id, name: view.name, display: view.display, daily_cap: cap, day });
  }
  return notices;
}

export interface CapReachedDeps {
  db: Executor;
  clock: Clock;
  mailer: CapMailer | null;
  /** The dashboard's keys page, for the e-mail. */
  keysLink: string;
  logger: { warn(obj: object, msg: string): void };
}

/**
 * Tells the owner that `keyId` reached `cap` today: the security log's entry, and the e-mail with
 * a relay. Called once per key and day (services/keys/publishable-keys.ts `consumeDailyCap`); never
 * throws, and is not awaited by the request that reached the cap (a slow relay must not hold it).
 */
export async function tellCapReached(deps: CapReachedDeps, keyId: string, cap: number): Promise<void> {
  const day = deps.clock.now().toISOString().slice(0, 10);
  try {
    const row = await findKeyById(deps.db, keyId);
    if (!row) return;
    const view = toKeyView(row);
    await recordAudit(deps.db, deps.clock, {
      accountId: view.account_id,
      type: 'publishable_cap_reached',
      actor: { kind: 'system' },
      details: { key_id: view.id, daily_cap: cap, day },
    });
    if (deps.mailer === null) return;
    const to = await getAccountEmail(deps.db, view.account_id);
    if (to === undefined) return;
    await deps.mailer.sendCapReached(to, {
      keyName: view.name,
      keyDisplay: view.display,
      dailyCap: cap,
      day,
      link: deps.keysLink,
    });
  } catch (err) {
    deps.logger.warn(
      { err, key_id: keyId },
      'telling the owner that a publishable key reached its cap failed',
    );
  }
}
