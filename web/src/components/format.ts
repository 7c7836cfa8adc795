/** How numbers and times read on every page (the browser's locale). */
const numberFormat = new Intl.NumberFormat();

export const formatNumber = (value: number): string => numberFormat.format(value);

export function formatPercent(part: number, whole: number): string {
  if (whole <= 0) return '0%';
  const percent = (part / whole) * 100;
  return `${percent > 0 && percent < 1 ? '<1' : Math.round(percent)}%`;
}

/** A calendar day in UTC: billing periods start and end at 00:00 UTC. */
export function formatDay(iso: string): string {
  return new Date(iso).toLocaleDateString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
  });
}

export function formatDateTime(iso: string | null, never = '—'): string {
  if (!iso) return never;
  return new Date(iso).toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  });
}

/** "3 addresses", "1 address". */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${formatNumber(count)} ${count === 1 ? one : many}`;
}
