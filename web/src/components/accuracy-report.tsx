/**
 * An accuracy report (docs/outcomes.md, "How accurate are we?"): the sentence a list owner wants
 * ("of the addresses called deliverable and sent to, 0.4% bounced"), the figures per verdict,
 * provider and score band with the counts behind each, and the reliability diagram. Shown on the
 * Outcomes page (the account's) and in the operator console (every account's, in aggregate).
 *
 * Accessible names: section "How accurate are we?" with select "Period"; tables "By verdict",
 * "By provider", "By score band" (and the diagram's).
 */
import type { UseQueryResult } from '@tanstack/react-query';
import type { AccuracyReport } from '../api/contract';
import { formatDay, formatNumber } from './format';
import { formatShare, ReliabilityDiagram } from './reliability-diagram';
import { EmptyState, ErrorMessage, Loading } from './status';
import { TableScroll } from './table-scroll';

type Figures = AccuracyReport['totals'];

function FigureCells({ f }: { f: Figures }) {
  return (
    <>
      <td>{formatNumber(f.verified)}</td>
      <td>{formatNumber(f.sent)}</td>
      <td>{formatNumber(f.delivered)}</td>
      <td>{formatNumber(f.hard_bounced)}</td>
      <td>{formatShare(f.bounce_rate)}</td>
    </>
  );
}

function FigureHeads() {
  return (
    <>
      <th scope="col">Verified</th>
      <th scope="col">Sent to</th>
      <th scope="col">Delivered</th>
      <th scope="col">Hard bounced</th>
      <th scope="col">Bounce rate</th>
    </>
  );
}

/** "Of the 1,204 addresses called deliverable and sent to, 0.4% bounced (5)." */
export function headline(report: AccuracyReport): string | null {
  const deliverable = report.by_status.find((s) => s.status === 'deliverable');
  if (!deliverable || deliverable.sent === 0) return null;
  return `Of the ${formatNumber(deliverable.sent)} addresses called deliverable and sent to since ${formatDay(report.from)}, ${formatShare(deliverable.bounce_rate)} bounced (${formatNumber(deliverable.hard_bounced)}).`;
}

export function AccuracyReportView({ report }: { report: AccuracyReport }) {
  if (report.totals.verified === 0)
    return <EmptyState>No address was verified with a live key in this period.</EmptyState>;
  const sentence = headline(report);
  return (
    <>
      <p className="lead">
        {sentence ??
          `${formatNumber(report.totals.verified)} addresses verified; none called deliverable has an outcome reported after its verification yet.`}
      </p>
      <TableScroll label="By verdict">
        <table className="table">
          <caption>By verdict</caption>
          <thead>
            <tr>
              <th scope="col">Status</th>
              <th scope="col">Reason</th>
              <FigureHeads />
            </tr>
          </thead>
          <tbody>
            {report.by_reason.map((r) => (
              <tr key={`${r.status} ${r.reason ?? ''}`}>
                <th scope="row">{r.status}</th>
                <td>{r.reason ?? '—'}</td>
                <FigureCells f={r} />
              </tr>
            ))}
            <tr>
              <th scope="row">All</th>
              <td />
              <FigureCells f={report.totals} />
            </tr>
          </tbody>
        </table>
      </TableScroll>
      <TableScroll label="By provider">
        <table className="table">
          <caption>By provider</caption>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <FigureHeads />
            </tr>
          </thead>
          <tbody>
            {report.by_provider.map((p) => (
              <tr key={p.provider ?? ''}>
                <th scope="row">{p.provider ?? 'other or none'}</th>
                <FigureCells f={p} />
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <TableScroll label="By score band">
        <table className="table">
          <caption>By score band</caption>
          <thead>
            <tr>
              <th scope="col">Scores</th>
              <FigureHeads />
            </tr>
          </thead>
          <tbody>
            {report.by_score_band.map((b) => (
              <tr key={b.min}>
                <th scope="row">
                  {b.min}–{b.max}
                </th>
                <FigureCells f={b} />
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <h3>Predicted against observed</h3>
      <ReliabilityDiagram points={report.reliability} />
    </>
  );
}

/** The period selector and the report, shared with the operator console. */
export function AccuracySection({
  report,
  days,
  setDays,
  intro,
}: {
  report: UseQueryResult<AccuracyReport>;
  days: number;
  setDays: (days: number) => void;
  intro: string;
}) {
  return (
    <section className="panel" aria-labelledby="accuracy-title">
      <h2 id="accuracy-title">How accurate are we?</h2>
      <p className="muted">{intro}</p>
      <div className="field">
        <label htmlFor="accuracy-days">Period</label>
        <select
          id="accuracy-days"
          className="input"
          value={days}
          onChange={(e) => setDays(Number(e.target.value))}
        >
          <option value={30}>Verified in the last 30 days</option>
          <option value={90}>Verified in the last 90 days</option>
          <option value={365}>Verified in the last 365 days</option>
        </select>
      </div>
      {report.isPending ? <Loading what="the report" /> : null}
      {report.isError ? <ErrorMessage action="Could not load the report" error={report.error} /> : null}
      {report.data ? <AccuracyReportView report={report.data} /> : null}
    </section>
  );
}
