/**
 * The promise of the rate limiter, checked on a record of admissions and refusals (times in any
 * one unit, ascending): no window of length `window` holds more than `rate` admissions, and every
 * refusal had `rate` admissions in the window before it (the limiter refuses nothing it could
 * have admitted). Returns one line per violation.
 */
export function slidingWindowViolations(
  admitted: readonly number[],
  refused: readonly number[],
  rate: number,
  window: number,
): string[] {
  const violations: string[] = [];
  // The fullest windows start at an admission: [a, a + window).
  for (const a of admitted) {
    const inside = admitted.filter((x) => x >= a && x < a + window).length;
    if (inside > rate) violations.push(`${inside} admitted in [${a}, ${a + window})`);
  }
  for (const t of refused) {
    const before = admitted.filter((x) => x > t - window && x <= t).length;
    if (before < rate) violations.push(`refused at ${t} with ${before} admitted in the window before it`);
  }
  return violations;
}
