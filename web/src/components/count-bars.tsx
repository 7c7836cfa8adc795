/**
 * Counts as horizontal bars in plain HTML: a list of label, number, share and a bar, readable
 * by a screen reader as it is (no canvas, no alternative needed). A bar is its share of the
 * total (34 % fills a third of the track), never scaled to the largest count. The total is the
 * bars' sum unless given: a list's counts by reason are shares of the list's rows, not of the rows
 * that have a reason, so that every share on a list's page has the same base.
 */
import { useId } from 'react';
import { formatNumber, formatPercent } from './format';

export interface Bar {
  key: string;
  label: string;
  count: number;
  /** CSS class giving the bar its colour and pattern (verdict colours, styles.css). */
  tone?: string;
}

export function CountBars({ title, bars, total: base }: { title: string; bars: Bar[]; total?: number }) {
  const total = base ?? bars.reduce((sum, bar) => sum + bar.count, 0);
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
                  style={{ width: `${total > 0 ? (bar.count / total) * 100 : 0}%` }}
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
