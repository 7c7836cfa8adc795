/**
 * The reliability diagram of an accuracy report: per score decile, the predicted chance of
 * delivery (the mean score / 100) against the observed share delivered, as SVG points sized by
 * their count, with the diagonal of a perfect prediction. The SVG is an image named by its title
 * and described in words; the same numbers follow as a table.
 *
 * Accessible names: image "Reliability diagram"; table "Predicted and observed delivery per score
 * decile".
 */
import { useId } from 'react';
import type { AccuracyReport } from '../api/contract';
import { formatNumber } from './format';
import { TableScroll } from './table-scroll';

type Point = AccuracyReport['reliability'][number];

const SIZE = 240;
const PAD = 36;
/** Room on the left for the tick labels and, beside them, the axis's title. */
const PAD_LEFT = 56;
const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 });
export const formatShare = (value: number | null): string => (value === null ? '—' : percent.format(value));

const x = (p: number) => PAD_LEFT + p * SIZE;
const y = (p: number) => PAD + (1 - p) * SIZE;

function describe(points: readonly Point[]): string {
  const known = points.filter((p) => p.n > 0);
  if (known.length === 0) return 'No score decile has addresses with a known outcome yet.';
  return known
    .map(
      (p) =>
        `Scores ${p.min} to ${p.max}: predicted ${formatShare(p.predicted)}, observed ${formatShare(p.observed)} of ${formatNumber(p.n)}.`,
    )
    .join(' ');
}

export function ReliabilityDiagram({ points }: { points: readonly Point[] }) {
  const id = useId();
  const known = points.filter((p) => p.n > 0 && p.predicted !== null && p.observed !== null);
  const most = Math.max(1, ...known.map((p) => p.n));
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  return (
    <figure className="reliability">
      <svg
        role="img"
        aria-labelledby={`${id}-title ${id}-desc`}
        viewBox={`0 0 ${SIZE + PAD_LEFT + PAD} ${SIZE + 2 * PAD}`}
        width="100%"
        style={{ maxWidth: SIZE + PAD_LEFT + PAD }}
      >
        <title id={`${id}-title`}>Reliability diagram</title>
        <desc id={`${id}-desc`}>{describe(points)}</desc>
        <rect x={PAD_LEFT} y={PAD} width={SIZE} height={SIZE} fill="none" stroke="#d0d5dd" />
        {ticks.map((t) => (
          <g key={t} fontSize="10" fill="#475467">
            <line x1={x(t)} y1={y(0)} x2={x(t)} y2={y(0) + 4} stroke="#98a2b3" />
            <text x={x(t)} y={y(0) + 15} textAnchor="middle">
              {percent.format(t)}
            </text>
            <line x1={x(0) - 4} y1={y(t)} x2={x(0)} y2={y(t)} stroke="#98a2b3" />
            <text x={x(0) - 6} y={y(t) + 3} textAnchor="end">
              {percent.format(t)}
            </text>
          </g>
        ))}
        <line x1={x(0)} y1={y(0)} x2={x(1)} y2={y(1)} stroke="#98a2b3" strokeDasharray="4 4" />
        {known.length > 1 ? (
          <polyline
            fill="none"
            stroke="#1f5eff"
            strokeWidth="1.5"
            points={known.map((p) => `${x(p.predicted!)},${y(p.observed!)}`).join(' ')}
          />
        ) : null}
        {known.map((p) => (
          <circle
            key={p.min}
            cx={x(p.predicted!)}
            cy={y(p.observed!)}
            r={3 + 5 * Math.sqrt(p.n / most)}
            fill="#1f5eff"
            fillOpacity="0.75"
          />
        ))}
        <text x={x(0.5)} y={SIZE + 2 * PAD - 4} textAnchor="middle" fontSize="11" fill="#344054">
          Predicted (score / 100)
        </text>
        <text
          x={14}
          y={y(0.5)}
          textAnchor="middle"
          fontSize="11"
          fill="#344054"
          transform={`rotate(-90 14 ${y(0.5)})`}
        >
          Observed delivered
        </text>
      </svg>
      <figcaption className="muted small">
        Points on the dashed diagonal would mean the score predicts delivery exactly; a point below it, fewer
        deliveries than the score says.
      </figcaption>
      <TableScroll label="Reliability per score decile">
        <table className="table">
          <caption>Predicted and observed delivery per score decile</caption>
          <thead>
            <tr>
              <th scope="col">Scores</th>
              <th scope="col">Addresses with a known outcome</th>
              <th scope="col">Delivered</th>
              <th scope="col">Hard bounced</th>
              <th scope="col">Predicted</th>
              <th scope="col">Observed</th>
            </tr>
          </thead>
          <tbody>
            {points.map((p) => (
              <tr key={p.min}>
                <th scope="row">
                  {p.min}–{p.max}
                </th>
                <td>{formatNumber(p.n)}</td>
                <td>{formatNumber(p.delivered)}</td>
                <td>{formatNumber(p.hard_bounced)}</td>
                <td>{formatShare(p.predicted)}</td>
                <td>{formatShare(p.observed)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </figure>
  );
}
