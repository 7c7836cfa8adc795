import { describe, expect, it } from 'vitest';
import { billingPeriodAt } from '../../src/services/usage/billing-period.js';

const period = (anchor: string, now: string) => {
  const p = billingPeriodAt(new Date(anchor), new Date(now));
  return [p.start.toISOString().slice(0, 10), p.end.toISOString().slice(0, 10)];
};

describe('billing periods', () => {
  it('start on the creation day of the month and last one month', () => {
    expect(period('2026-01-15T12:00:00Z', '2026-01-20T00:00:00Z')).toEqual(['2026-01-15', '2026-02-15']);
    expect(period('2026-01-15T12:00:00Z', '2026-02-14T23:59:59Z')).toEqual(['2026-01-15', '2026-02-15']);
    expect(period('2026-01-15T12:00:00Z', '2026-02-15T00:00:00Z')).toEqual(['2026-02-15', '2026-03-15']);
  });

  it('fall on the last day of a month without the anchor day (January 31)', () => {
    expect(period('2026-01-31T08:00:00Z', '2026-02-10T00:00:00Z')).toEqual(['2026-01-31', '2026-02-28']);
    expect(period('2026-01-31T08:00:00Z', '2026-03-05T00:00:00Z')).toEqual(['2026-02-28', '2026-03-31']);
    expect(period('2026-01-31T08:00:00Z', '2026-04-30T00:00:00Z')).toEqual(['2026-04-30', '2026-05-31']);
    expect(period('2026-01-31T08:00:00Z', '2028-02-29T01:00:00Z')).toEqual(['2028-02-29', '2028-03-31']);
  });

  it('handle the 29th and 30th the same way', () => {
    expect(period('2026-01-29T00:00:00Z', '2026-03-01T00:00:00Z')).toEqual(['2026-02-28', '2026-03-29']);
    expect(period('2026-03-30T00:00:00Z', '2027-02-28T10:00:00Z')).toEqual(['2027-02-28', '2027-03-30']);
  });

  it('cross the year boundary', () => {
    expect(period('2025-06-20T00:00:00Z', '2026-01-05T00:00:00Z')).toEqual(['2025-12-20', '2026-01-20']);
    expect(period('2025-06-20T00:00:00Z', '2025-12-25T00:00:00Z')).toEqual(['2025-12-20', '2026-01-20']);
  });

  it('always contain now, and consecutive periods touch', () => {
    const anchor = new Date('2024-01-31T00:00:00Z');
    let now = new Date('2024-01-31T00:00:00Z');
    let previousEnd: number | null = null;
    for (let i = 0; i < 40; i++) {
      const p = billingPeriodAt(anchor, now);
      expect(p.start.getTime()).toBeLessThanOrEqual(now.getTime());
      expect(p.end.getTime()).toBeGreaterThan(now.getTime());
      if (previousEnd !== null) expect(p.start.getTime()).toBe(previousEnd);
      previousEnd = p.end.getTime();
      now = p.end;
    }
  });
});
