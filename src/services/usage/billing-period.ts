/**
 * Monthly billing periods anchored on the account's creation day (UTC). The current period is
 * derived from the clock, so no scheduled job is needed for it to roll over. An anchor day the
 * month does not have (29th-31st) falls on that month's last day: an account created on
 * January 31 has periods Jan 31 - Feb 28, Feb 28 - Mar 31, Mar 31 - Apr 30, ...
 */
export interface BillingPeriod {
  /** Inclusive. */
  start: Date;
  /** Exclusive; also when the quota resets. */
  end: Date;
}

function anchorIn(year: number, month: number, day: number): Date {
  // Date.UTC normalises month overflow (month 12 -> January of the next year).
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(Date.UTC(year, month, Math.min(day, lastDay)));
}

/** The period that contains `now` for an account created at `anchor`. */
export function billingPeriodAt(anchor: Date, now: Date): BillingPeriod {
  const day = anchor.getUTCDate();
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  const thisMonth = anchorIn(year, month, day);
  if (now.getTime() >= thisMonth.getTime()) {
    return { start: thisMonth, end: anchorIn(year, month + 1, day) };
  }
  return { start: anchorIn(year, month - 1, day), end: thisMonth };
}
