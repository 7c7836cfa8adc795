/**
 * Outcomes (docs/outcomes.md): upload a file of bounces (a CSV of address, type and an optional
 * time; an .mbox of bounce messages), see what came in per day and per source, and how accurate
 * the account's verdicts were: the accuracy report with its reliability diagram.
 *
 * Accessible names: heading "Outcomes"; sections "Upload outcomes", "What came in", "How accurate
 * are we?"; file input "Choose a file"; button "Upload"; selects "Days shown" and "Period"; tables
 * "By day", "By source", and the report's (components/accuracy-report.tsx).
 */
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { OutcomeIntake, OutcomeUploadReport } from '../api/contract';
import { useEndpoints } from '../api/endpoints';
import { useInvalidate, useOutcomeIntake, useOutcomesReport } from '../api/queries';
import { AccuracySection } from '../components/accuracy-report';
import { formatDay, formatNumber, plural } from '../components/format';
import { PageTitle } from '../components/shell';
import { EmptyState, ErrorMessage, Loading } from '../components/status';
import { TableScroll } from '../components/table-scroll';

const TYPES = [
  ['delivered', 'Delivered'],
  ['hard_bounce', 'Hard bounces'],
  ['soft_bounce', 'Soft bounces'],
  ['complaint', 'Complaints'],
  ['unsubscribed', 'Unsubscribed'],
  ['opened', 'Opened'],
  ['clicked', 'Clicked'],
] as const;

const SOURCES: Record<string, string> = {
  api: 'API',
  upload: 'Upload',
  message: 'Bounce message',
  ses: 'Amazon SES',
  sendgrid: 'SendGrid',
  mailgun: 'Mailgun',
  postmark: 'Postmark',
};

const kindOf = (file: File): 'csv' | 'mbox' => (/\.mbox$/i.test(file.name) ? 'mbox' : 'csv');

function UploadResult({ report }: { report: OutcomeUploadReport }) {
  return (
    <div role="status" className={report.refused === 0 ? 'notice notice-ok' : 'notice notice-warn'}>
      <p>
        {plural(report.taken, 'event')} taken
        {report.duplicates > 0 ? ` (${formatNumber(report.duplicates)} already held)` : ''}
        {report.refused > 0 ? `, ${formatNumber(report.refused)} refused:` : '.'}
      </p>
      {report.refused > 0 ? (
        <ul>
          {report.refusals.slice(0, 20).map((r) => (
            <li key={r.item}>
              {report.kind === 'csv' ? 'Row' : 'Message'} {r.item}: {r.message}
            </li>
          ))}
          {report.refusals.length > 20 ? <li>and {formatNumber(report.refusals.length - 20)} more</li> : null}
        </ul>
      ) : null}
      {report.mbox ? <MboxNotes notes={report.mbox} /> : null}
    </div>
  );
}

/** What an mbox held besides its events: messages that were no bounce, recipients with no event. */
function MboxNotes({ notes }: { notes: NonNullable<OutcomeUploadReport['mbox']> }) {
  const { rejected, ignored } = notes;
  return (
    <>
      <p>
        {plural(notes.messages, 'message')} read
        {rejected.length > 0
          ? `; ${formatNumber(rejected.length)} not a bounce or complaint, stored nowhere`
          : ''}
        {ignored.length > 0
          ? `; ${plural(ignored.length, 'recipient')} with no event (a refusal about the sender says nothing of the mailbox)`
          : ''}
        .
      </p>
      {rejected.length + ignored.length > 0 ? (
        <ul>
          {rejected.slice(0, 10).map((r) => (
            <li key={`r${r.item}`}>
              Message {r.item}: {r.message}
            </li>
          ))}
          {ignored.slice(0, 10).map((i, n) => (
            <li key={`i${i.item}-${n}`}>
              Message {i.item}
              {i.email === undefined ? '' : `, ${i.email}`}: {i.message}
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}

function UploadForm() {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const [file, setFile] = useState<File | null>(null);
  const upload = useMutation({
    mutationFn: (chosen: File) => api.uploadOutcomes(chosen, kindOf(chosen)),
    onSuccess: () => void invalidate(['outcomes']),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (file) upload.mutate(file);
  };
  return (
    <section className="panel" aria-labelledby="outcomes-upload-title">
      <h2 id="outcomes-upload-title">Upload outcomes</h2>
      <p className="muted">
        A CSV with the address, the type (<code>hard_bounce</code>, <code>soft_bounce</code>,{' '}
        <code>delivered</code>, <code>complaint</code>, <code>unsubscribed</code>, <code>opened</code>,{' '}
        <code>clicked</code>) and, best, when it happened (<code>2026-03-09T08:00:00Z</code>), one event a
        row, with or without a header row (<code>email,type,at</code>); or an <code>.mbox</code> of bounce
        messages. Up to 10,000 events a file.
      </p>
      <form className="form" onSubmit={submit} aria-labelledby="outcomes-upload-title">
        <div className="field">
          <label htmlFor="outcomes-file">Choose a file</label>
          <input
            id="outcomes-file"
            type="file"
            accept=".csv,.txt,.mbox,text/csv,application/mbox"
            onChange={(event) => {
              setFile(event.target.files?.[0] ?? null);
              upload.reset();
            }}
          />
        </div>
        <button type="submit" className="button button-primary" disabled={!file || upload.isPending}>
          {upload.isPending ? 'Uploading…' : 'Upload'}
        </button>
      </form>
      {upload.isError ? <ErrorMessage action="Could not take the file" error={upload.error} /> : null}
      {upload.data ? <UploadResult report={upload.data} /> : null}
    </section>
  );
}

function IntakeTable({
  caption,
  head,
  rows,
}: {
  caption: string;
  head: string;
  rows: { key: string; label: string; total: number; by_type: OutcomeIntake['by_day'][number]['by_type'] }[];
}) {
  return (
    <TableScroll label={caption}>
      <table className="table">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{head}</th>
            <th scope="col">Events</th>
            {TYPES.map(([type, label]) => (
              <th scope="col" key={type}>
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key}>
              <th scope="row">{row.label}</th>
              <td>{formatNumber(row.total)}</td>
              {TYPES.map(([type]) => (
                <td key={type}>{formatNumber(row.by_type[type])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function Intake() {
  const [days, setDays] = useState(30);
  const intake = useOutcomeIntake(days);
  return (
    <section className="panel" aria-labelledby="outcomes-intake-title">
      <h2 id="outcomes-intake-title">What came in</h2>
      <div className="field">
        <label htmlFor="outcomes-days">Days shown</label>
        <select
          id="outcomes-days"
          className="input"
          value={days}
          onChange={(e) => setDays(Number(e.target.value))}
        >
          <option value={7}>Last 7 days</option>
          <option value={30}>Last 30 days</option>
          <option value={90}>Last 90 days</option>
        </select>
      </div>
      {intake.isPending ? <Loading what="the outcomes" /> : null}
      {intake.isError ? <ErrorMessage action="Could not load the outcomes" error={intake.error} /> : null}
      {intake.data && intake.data.total === 0 ? (
        <EmptyState>No outcome came in since {formatDay(intake.data.since)}.</EmptyState>
      ) : null}
      {intake.data && intake.data.total > 0 ? (
        <>
          <p>
            {plural(intake.data.total, 'event')} since {formatDay(intake.data.since)}.
          </p>
          <IntakeTable
            caption="By source"
            head="Source"
            rows={intake.data.by_source.map((s) => ({
              key: s.source,
              label: SOURCES[s.source] ?? s.source,
              ...s,
            }))}
          />
          <IntakeTable
            caption="By day"
            head="Day"
            rows={intake.data.by_day.map((d) => ({ key: d.day, label: formatDay(d.day), ...d }))}
          />
        </>
      ) : null}
    </section>
  );
}

export function OutcomesPage() {
  const [days, setDays] = useState(90);
  const report = useOutcomesReport(days);
  return (
    <>
      <PageTitle title="Outcomes">Outcomes</PageTitle>
      <UploadForm />
      <Intake />
      <AccuracySection
        report={report}
        days={days}
        setDays={setDays}
        intro="The addresses verified with a live key in the period, and what the outcomes reported after each verification say of its verdict."
      />
    </>
  );
}
