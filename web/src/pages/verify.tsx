/**
 * Verify one address, live, counted against the quota like POST /v1/verify: the verdict, score
 * and reason, then every check of docs/verdicts.md in words (syntax, MX hosts, the SMTP reply with
 * its code, catch-all, disposable, role, free provider) and the typo suggestion.
 *
 * Accessible names: heading "Verify an address"; field "E-mail address"; button "Verify";
 * region "Result"; list "Checks" with one item per check, each headed by the check's name
 * ("Syntax", "Mail servers (MX)", "Mailbox (SMTP)", "Catch-all", "Disposable", "Role address",
 * "Free provider"); button "Verify <suggestion> instead"; checkbox "Include the SMTP conversation",
 * and with it in the result the disclosure button "Show the SMTP conversation".
 */
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { Check, Checks, VerificationResult } from '../api/contract';
import { keys, useInvalidate } from '../api/queries';
import { useEndpoints } from '../api/endpoints';
import { formatDateTime, formatNumber } from '../components/format';
import { Choice } from '../components/choice';
import { PageTitle } from '../components/shell';
import { SmtpConversation } from '../components/smtp-conversation';
import { ErrorMessage } from '../components/status';
import { VERDICT_MEANING, VerdictBadge, reasonText } from '../components/verdict';

const DNS_ERRORS: Record<string, string> = {
  NXDOMAIN: 'the domain does not exist (NXDOMAIN)',
  NODATA: 'the domain has no mail server (no MX record and no address)',
  NO_MAIL_HOST: 'the domain has no mail server (no MX record and no address)',
  NULL_MX: 'the domain publishes a null MX: it receives no mail',
  SERVFAIL: 'the domain’s DNS servers failed to answer (SERVFAIL)',
  TIMEOUT: 'DNS did not answer in time',
  REFUSED: 'the DNS server refused the query',
  CONNREFUSED: 'the DNS server could not be reached',
  INTERNAL_HOSTS_ONLY: 'every mail server has an internal address (loopback or private), which is not probed',
};

/** The service may answer from its result cache (`cached`, `checked_at` beside the v1 fields). */
function cachedAt(result: VerificationResult): string | null {
  const extra = result as VerificationResult & { cached?: unknown; checked_at?: unknown };
  return extra.cached === true && typeof extra.checked_at === 'string' ? extra.checked_at : null;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

type Verdict = 'pass' | 'concern' | 'none';
const verdictOf = (check: Check): Verdict =>
  check.passed === true ? 'pass' : check.passed === false ? 'concern' : 'none';

interface Explained {
  name: string;
  state: Verdict;
  /** The word shown beside the name. */
  label: string;
  detail: React.ReactNode;
}

function syntax(check: Checks['syntax']): Explained {
  if (check.passed) {
    return {
      name: 'Syntax',
      state: 'pass',
      label: 'Well-formed',
      detail: (
        <>
          Local part <code>{check.local}</code>, domain <code>{check.domain}</code>.
        </>
      ),
    };
  }
  return {
    name: 'Syntax',
    state: 'concern',
    label: 'Not valid',
    detail: <>{check.error ?? 'The address is not well-formed.'} No other check ran.</>,
  };
}

/** The providers of `checks.mx.provider` (docs/verdicts.md, "Which provider runs the mail"). */
const PROVIDER_NAMES: Record<NonNullable<Checks['mx']['provider']>, string> = {
  google: 'Google (Gmail, Google Workspace)',
  microsoft: 'Microsoft (Microsoft 365, Outlook.com)',
  yahoo: 'Yahoo (Yahoo Mail, AOL)',
  apple: 'Apple (iCloud Mail)',
  proofpoint: 'Proofpoint',
  mimecast: 'Mimecast',
  barracuda: 'Barracuda',
  zoho: 'Zoho Mail',
  yandex: 'Yandex',
  mailru: 'Mail.ru',
  gmx: 'GMX, WEB.DE, mail.com',
  fastmail: 'Fastmail',
  proton: 'Proton Mail',
};

function providerLine(check: Checks['mx']): React.ReactNode {
  return check.provider ? (
    <p>
      Run by <strong>{PROVIDER_NAMES[check.provider]}</strong>.
    </p>
  ) : null;
}

function mx(check: Checks['mx']): Explained {
  const name = 'Mail servers (MX)';
  const found = check.error ? (DNS_ERRORS[check.error] ?? `DNS answered ${check.error}`) : null;
  const error = found ? found.charAt(0).toUpperCase() + found.slice(1) : null;
  if (check.passed === null) {
    return {
      name,
      state: 'none',
      label: error ? 'Inconclusive' : 'Not checked',
      detail: error ? `${error}.` : 'DNS was not asked.',
    };
  }
  if (check.passed === false)
    return {
      name,
      state: 'concern',
      label: 'No mail server',
      detail: `${error ?? 'No mail server was found'}.`,
    };
  if (check.implicit) {
    return {
      name,
      state: 'pass',
      label: 'Found',
      detail: (
        <>
          No MX record: the domain’s own address (A/AAAA) receives its mail.
          {providerLine(check)}
        </>
      ),
    };
  }
  return {
    name,
    state: 'pass',
    label: 'Found',
    detail: (
      <>
        {check.records.length === 1
          ? 'One mail server:'
          : `${check.records.length} mail servers, in order of preference:`}
        <ul className="plain-list">
          {check.records.map((record) => (
            <li key={`${record.priority}-${record.exchange}`}>
              <code>{record.exchange}</code> <span className="muted">(priority {record.priority})</span>
            </li>
          ))}
        </ul>
        {providerLine(check)}
      </>
    ),
  };
}

function smtp(check: Checks['smtp'], result: VerificationResult): Explained {
  const name = 'Mailbox (SMTP)';
  if (check.code === null) {
    return {
      name,
      state: 'none',
      label: 'Not asked',
      detail: check.host
        ? `${check.host} gave no answer about the mailbox. ${reasonText(result.reason)}`
        : `No mail server was asked about the mailbox. ${result.reason ? reasonText(result.reason) : ''}`,
    };
  }
  const reply = [String(check.code), check.enhanced_code].filter(Boolean).join(' ');
  const outcome = check.passed === true ? 'Accepted' : check.passed === false ? 'Refused' : 'Inconclusive';
  return {
    name,
    state: verdictOf(check),
    label: outcome,
    detail: (
      <>
        <code>{check.host}</code> answered <code>{reply}</code>
        {check.message ? (
          <>
            {' '}
            “<span className="mono">{check.message}</span>”
          </>
        ) : null}
        {check.passed === null && result.reason ? ` — ${reasonText(result.reason)}` : ''}.{' '}
        <span className="muted">
          {check.tls ? 'Encrypted with STARTTLS.' : 'Not encrypted.'}
          {check.duration_ms !== null ? ` Took ${formatNumber(check.duration_ms)} ms.` : ''}
        </span>
      </>
    ),
  };
}

function catchAll(check: Check): Explained {
  const name = 'Catch-all';
  if (check.passed === false) {
    return {
      name,
      state: 'concern',
      label: 'Accepts everything',
      detail: 'The domain also accepted a made-up address, so its yes does not prove this mailbox exists.',
    };
  }
  if (check.passed === true) {
    return {
      name,
      state: 'pass',
      label: 'No',
      detail: 'The domain refused a made-up address, so its yes means something.',
    };
  }
  return { name, state: 'none', label: 'Not tested', detail: 'Tested only when the mailbox is accepted.' };
}

function flag(name: string, check: Check, yes: string, no: string): Explained {
  if (check.passed === null)
    return { name, state: 'none', label: 'Not checked', detail: 'The address is not well-formed.' };
  return check.value === true
    ? { name, state: 'concern', label: 'Yes', detail: yes }
    : { name, state: 'pass', label: 'No', detail: no };
}

/** Every check of a result, explained. */
export function explainChecks(result: VerificationResult): Explained[] {
  const { checks } = result;
  const mxHost = text(checks.disposable['mx_host']);
  return [
    syntax(checks.syntax),
    mx(checks.mx),
    smtp(checks.smtp, result),
    catchAll(checks.catchAll),
    flag(
      'Disposable',
      checks.disposable,
      mxHost
        ? `The domain’s mail goes to ${mxHost}, a disposable (throw-away) mail service.`
        : 'The domain is a disposable (throw-away) mail service.',
      'Not a disposable mail service.',
    ),
    flag(
      'Role address',
      checks.roleAddress,
      'A role mailbox (such as info@ or support@), usually read by several people or nobody.',
      'Not a role address.',
    ),
    flag(
      'Free provider',
      checks.freeProvider,
      'A free mailbox provider (such as Gmail or Yahoo).',
      'Not a free mailbox provider.',
    ),
  ];
}

function Result({ result, onVerify }: { result: VerificationResult; onVerify: (email: string) => void }) {
  return (
    <section className="panel result" aria-labelledby="result-title">
      <h2 id="result-title">
        Result <span className="sr-only">for {result.email}</span>
      </h2>
      <p className="result-email mono">{result.email}</p>
      <div className="result-head">
        <VerdictBadge status={result.status} />
        <span className="score">
          Score <strong>{result.score}</strong> of 100
        </span>
      </div>
      <p>
        {VERDICT_MEANING[result.status]} {result.reason ? reasonText(result.reason) : ''}
      </p>
      {result.reason ? (
        <p className="muted small">
          Reason code: <code>{result.reason}</code>
        </p>
      ) : null}
      {result.did_you_mean ? (
        <p className="notice notice-info">
          Did you mean <strong>{result.did_you_mean}</strong>?{' '}
          <button
            type="button"
            className="button button-small"
            onClick={() => onVerify(result.did_you_mean ?? '')}
          >
            Verify {result.did_you_mean} instead
          </button>
        </p>
      ) : (
        <p className="muted small">No typo suggestion.</p>
      )}
      <h3>Checks</h3>
      <ul className="checks" aria-label="Checks">
        {explainChecks(result).map((check) => (
          <li key={check.name} className={`check check-${check.state}`}>
            <h4 className="check-name">{check.name}</h4>
            <span className={`check-label check-label-${check.state}`}>{check.label}</span>
            <div className="check-detail">{check.detail}</div>
          </li>
        ))}
      </ul>
      {result.transcript ? <SmtpConversation lines={result.transcript} /> : null}
      <p className="muted small">
        {cachedAt(result)
          ? `A recent result from the cache, checked at ${formatDateTime(cachedAt(result))}.`
          : `Answered in ${formatNumber(result.latency_ms)} ms.`}
      </p>
    </section>
  );
}

export function VerifyPage() {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const [email, setEmail] = useState('');
  const [transcript, setTranscript] = useState(false);
  const verify = useMutation({
    mutationFn: api.verify,
    onSettled: () => invalidate(keys.overview),
  });
  const run = (address: string) => {
    setEmail(address);
    verify.mutate(transcript ? { email: address, include_transcript: true } : { email: address });
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (email.trim() !== '') run(email.trim());
  };
  return (
    <>
      <PageTitle title="Verify an address">Verify an address</PageTitle>
      <form className="form form-inline" onSubmit={submit} noValidate>
        <div className="field grow">
          <label htmlFor="verify-email">E-mail address</label>
          <input
            id="verify-email"
            className="input"
            type="email"
            inputMode="email"
            autoComplete="off"
            spellCheck={false}
            required
            maxLength={320}
            value={email}
            onChange={(event) => setEmail(event.target.value)}
            aria-describedby="verify-hint"
          />
        </div>
        <button type="submit" className="button button-primary" disabled={verify.isPending}>
          {verify.isPending ? 'Verifying…' : 'Verify'}
        </button>
      </form>
      <Choice
        type="checkbox"
        label="Include the SMTP conversation"
        hint="every command sent and reply received; always a fresh probe, never a cached answer"
        checked={transcript}
        onChange={setTranscript}
      />
      <p id="verify-hint" className="hint">
        A live verification: DNS, then the mail server is asked about the mailbox (nothing is sent). It counts
        one verification against the quota.
      </p>
      {verify.isPending ? (
        <p role="status" className="loading">
          Asking the mail server… this can take a few seconds.
        </p>
      ) : null}
      <ErrorMessage action="Could not verify the address" error={verify.error} />
      {verify.data && !verify.isPending ? <Result result={verify.data} onVerify={run} /> : null}
    </>
  );
}
