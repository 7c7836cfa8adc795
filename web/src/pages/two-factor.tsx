/**
 * Two-factor sign-in on the settings page, and the page a member sees when the account requires
 * two factors they do not have yet: turning TOTP on (the QR code the server drew, the secret to
 * type by hand, a first code and the password), the ten recovery codes shown once, turning it off (password and a
 * code), and, for the owner, requiring it of every member.
 *
 * Accessible names: heading "Two-factor sign-in"; button "Turn on two-factor sign-in"; image
 * "QR code for your authenticator app"; field "Secret key"; fields "Code from the app" and "Your
 * password" (a session alone cannot turn it on), button "Confirm"; list "Recovery codes", button "I have saved the codes"; fields "Password" and
 * "Code from the app or a recovery code", button "Turn off two-factor sign-in"; buttons "Require
 * two-factor sign-in" and "Stop requiring two-factor sign-in". Required page: heading "Turn on
 * two-factor sign-in".
 */
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { TwoFactorEnrolment, TwoFactorStatus } from '../api/contract';
import { keys, useInvalidate, useSession, useTwoFactor } from '../api/queries';
import { useEndpoints } from '../api/endpoints';
import { CodeField } from '../components/code-field';
import { CopyField } from '../components/copy-button';
import { formatDateTime } from '../components/format';
import { PageTitle } from '../components/shell';
import { ErrorMessage, Loading } from '../components/status';

/** The server's SVG as an image: no markup of it enters the page (the CSP allows data: images). */
function qrSource(svg: string): string {
  return `data:image/svg+xml;base64,${btoa(svg)}`;
}

function RecoveryCodesShown({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  return (
    <div className="form">
      <p className="notice notice-ok" role="status">
        Two-factor sign-in is on. Save these recovery codes somewhere safe: each signs you in once without the
        app, and they are not shown again.
      </p>
      <ul className="recovery-codes mono" aria-label="Recovery codes">
        {codes.map((code) => (
          <li key={code}>{code}</li>
        ))}
      </ul>
      <CopyField id="two-factor-recovery" label="All recovery codes" value={codes.join(' ')} />
      <button type="button" className="button button-primary" onClick={onDone}>
        I have saved the codes
      </button>
    </div>
  );
}

function Enrol({ onEnabled }: { onEnabled: (codes: string[]) => void }) {
  const api = useEndpoints();
  const [enrolment, setEnrolment] = useState<TwoFactorEnrolment | null>(null);
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const start = useMutation({ mutationFn: api.startTwoFactor, onSuccess: setEnrolment });
  const confirm = useMutation({
    mutationFn: api.confirmTwoFactor,
    onSuccess: (answer) => {
      setEnrolment(null);
      setCode('');
      setPassword('');
      onEnabled(answer.recovery_codes);
    },
  });
  if (enrolment === null) {
    return (
      <div className="form">
        <p>
          Off. With it on, signing in asks for a code from an authenticator app (any app for TOTP codes) after
          the password.
        </p>
        <ErrorMessage action="Could not start" error={start.error} />
        <button
          type="button"
          className="button button-primary"
          onClick={() => start.mutate()}
          disabled={start.isPending}
        >
          Turn on two-factor sign-in
        </button>
      </div>
    );
  }
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (code.trim() !== '') confirm.mutate({ code: code.trim(), password });
  };
  return (
    <form className="form form-narrow" onSubmit={submit} noValidate>
      <p>Scan this code with your authenticator app, or type the secret key into it.</p>
      <img
        className="qr-code"
        src={qrSource(enrolment.qr_svg)}
        alt="QR code for your authenticator app"
        width={200}
        height={200}
      />
      <CopyField id="two-factor-secret" label="Secret key" value={enrolment.secret} />
      <CodeField
        id="two-factor-code"
        label="Code from the app"
        inputMode="numeric"
        required
        value={code}
        onChange={setCode}
      />
      <div className="field">
        <label htmlFor="two-factor-on-password">Your password</label>
        <input
          id="two-factor-on-password"
          className="input"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
      </div>
      <ErrorMessage action="Could not turn it on" error={confirm.error} />
      <button type="submit" className="button button-primary" disabled={confirm.isPending}>
        Confirm
      </button>
    </form>
  );
}

function TurnOff({ status }: { status: TwoFactorStatus }) {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const disable = useMutation({
    mutationFn: api.disableTwoFactor,
    onSuccess: async () => {
      setPassword('');
      setCode('');
      await invalidate(keys.twoFactor, keys.session);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    disable.mutate({ password, code: code.trim() });
  };
  return (
    <form className="form form-narrow" onSubmit={submit} noValidate>
      <p>
        On since {status.enabled_at ? formatDateTime(status.enabled_at) : '—'}; {status.recovery_codes_left}{' '}
        of 10 recovery codes left.
      </p>
      {status.account_requires ? (
        <p className="notice">This account requires two-factor sign-in, so it cannot be turned off.</p>
      ) : (
        <>
          <div className="field">
            <label htmlFor="two-factor-off-password">Password</label>
            <input
              id="two-factor-off-password"
              className="input"
              type="password"
              autoComplete="current-password"
              value={password}
              onChange={(event) => setPassword(event.target.value)}
            />
          </div>
          <CodeField
            id="two-factor-off-code"
            label="Code from the app or a recovery code"
            value={code}
            onChange={setCode}
          />
          <ErrorMessage action="Could not turn it off" error={disable.error} />
          <button type="submit" className="button" disabled={disable.isPending}>
            Turn off two-factor sign-in
          </button>
        </>
      )}
    </form>
  );
}

function Requirement({ status }: { status: TwoFactorStatus }) {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const change = useMutation({
    mutationFn: api.requireTwoFactor,
    onSuccess: () => invalidate(keys.twoFactor, keys.session),
  });
  return (
    <div className="form">
      <h3>For the whole account</h3>
      <p>
        {status.account_requires
          ? 'Every member must sign in with two factors; members without them can only turn them on.'
          : 'Members choose for themselves. Requiring it sends members without two factors to turn them on before anything else.'}
      </p>
      <ErrorMessage action="Could not change the requirement" error={change.error} />
      <button
        type="button"
        className="button"
        disabled={change.isPending || (!status.enabled && !status.account_requires)}
        onClick={() => change.mutate({ required: !status.account_requires })}
      >
        {status.account_requires ? 'Stop requiring two-factor sign-in' : 'Require two-factor sign-in'}
      </button>
      {!status.enabled && !status.account_requires ? (
        <p className="hint">Turn it on for yourself first.</p>
      ) : null}
    </div>
  );
}

/** The settings page's section. `onDone`: after the recovery codes were seen (default: refresh). */
export function TwoFactorSection({ onDone }: { onDone?: () => void }) {
  const status = useTwoFactor();
  const invalidate = useInvalidate();
  const isOwner = useSession().data?.member?.role === 'owner';
  const [codes, setCodes] = useState<string[] | null>(null);
  const done = () => {
    setCodes(null);
    void invalidate(keys.twoFactor, keys.session);
    onDone?.();
  };
  return (
    <section className="panel" aria-labelledby="two-factor-title">
      <h2 id="two-factor-title">Two-factor sign-in</h2>
      {status.isPending ? <Loading what="two-factor sign-in" /> : null}
      <ErrorMessage action="Could not load two-factor sign-in" error={status.data ? null : status.error} />
      {codes !== null ? (
        <RecoveryCodesShown codes={codes} onDone={done} />
      ) : status.data ? (
        <>
          {status.data.enabled ? <TurnOff status={status.data} /> : <Enrol onEnabled={setCodes} />}
          {isOwner ? <Requirement status={status.data} /> : null}
        </>
      ) : null}
    </section>
  );
}

/** What a member of an account that requires two factors sees until they have them. */
export function TwoFactorRequiredPage() {
  return (
    <>
      <PageTitle title="Turn on two-factor sign-in">Turn on two-factor sign-in</PageTitle>
      <p className="notice" role="status">
        This account requires two-factor sign-in. Turn it on to use the dashboard.
      </p>
      <TwoFactorSection />
    </>
  );
}
