import type { Usage } from '../api/contract';
import { formatNumber, formatPercent } from './format';

/**
 * The quota as an accessible meter (role="meter", named "Quota used"): the bar turns amber at 80%
 * and red when the quota is used up; beyond it, the overage is said in words.
 */
export function UsageGauge({ usage }: { usage: Usage }) {
  const { limit, used, remaining } = usage.quota;
  // Plan `unlimited` (the operator's own account): nothing to fill, the count alone.
  if (limit === null || remaining === null)
    return (
      <div className="gauge">
        <p className="gauge-legend">
          <span>{formatNumber(used)} verifications used this period</span>
          <span>
            <strong>No monthly quota</strong>
          </span>
        </p>
      </div>
    );
  const shown = Math.min(used, limit);
  const ratio = limit > 0 ? shown / limit : 1;
  const level = ratio >= 1 ? 'full' : ratio >= 0.8 ? 'high' : 'ok';
  const text = `${formatNumber(used)} of ${formatNumber(limit)} verifications used (${formatPercent(used, limit)})`;
  return (
    <div className="gauge">
      <div
        className={`gauge-track gauge-${level}`}
        role="meter"
        aria-label="Quota used"
        aria-valuemin={0}
        aria-valuemax={limit}
        aria-valuenow={shown}
        aria-valuetext={text}
      >
        <div className="gauge-fill" style={{ width: `${Math.round(ratio * 1000) / 10}%` }} />
      </div>
      <p className="gauge-legend">
        <span>{text}</span>
        <span>
          <strong>{formatNumber(remaining)}</strong> remaining
        </span>
      </p>
    </div>
  );
}
