/**
 * Counts as horizontal bars in plain HTML: a list of label, number, share and a bar, readable
 * by a screen reader as it is (no canvas, no alternative needed).
 */
import { useId } from 'react';
import { formatNumber, formatPercent } from './format';

export interface Bar {
  key: string;
  label: string;
  count: number;
  /** CSS class giving the bar its colour (verdict colours). */
  tone?: string;
}

export function CountBars({ title, bars }: { title: string; bars: Bar[] }) {
  const total = bars.reduce((sum, bar) => sum + bar.count, 0);
  const max = Math.max(1, ...bars.map((bar) => bar.count));
  const titleId = useId();
  return (
    <figure className="bars" aria-labelledby={titleId}>
      <figcaption id={titleId} className="bars-title">
        {title}
      </figcaption>
      {bars.length === 0 ? (
        <p className="muted">Nothing to show.</p>
      ) : (
        <ul className="bars-list">
          {bars.map((bar) => (
            <li key={bar.key} className="bars-row">
              <span className="bars-label">{bar.label}</span>
              <span className="bars-track" aria-hidden="true">
                <span
                  className={`bars-fill ${bar.tone ?? ''}`}
                  style={{ width: `${(bar.count / max) * 100}%` }}
                />
              </span>
              <span className="bars-value">
                {formatNumber(bar.count)} <span className="muted">({formatPercent(bar.count, total)})</span>
              </span>
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}
