/**
 * Sign in with e-mail and password, then, for a member with two factors, a code from the
 * authenticator app or a recovery code (no session exists before it). A wrong password and an
 * unknown address get the same answer from the server; too many attempts get 429 and that is
 * said in words. After several failures the server asks for a proof of work (428
 * `challenge_required`): the ALTCHA widget appears (loaded only then), solves a challenge by
 * itself, and the attempt is sent again with its payload; each later attempt spends a solution and
 * the widget solves the next one.
 *
 * Accessible names: heading "Sign in"; fields "E-mail", "Password"; button "Sign in"; link
 * "Forgot your password?". Second step: field "Authentication code", button "Verify", button
 * "Start again". Proof of work: the widget's checkbox "I'm not a robot" and the status "Solving
 * a proof-of-work puzzle…" while an attempt waits for it.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, Redirect, useSearch } from 'wouter';
import { ApiError } from '../api/client';
import type { SecondFactorChallenge } from '../api/contract';
import { isChallenge, keys, startSession, useSession } from '../api/queries';
import { useEndpoints } from '../api/endpoints';
import { CodeField } from '../components/code-field';
import { ErrorMessage } from '../components/status';
import { AuthFrame } from './auth-frame';

// The widget and its worker load only when the server asks for a proof of work.
const ProofOfWork = lazy(() => import('../components/proof-of-work'));

/** Attempts sent again by themselves after a 428, before the error is shown instead. */
const AUTO_RESUBMITS = 2;

const isChallengeRequired = (error: unknown): boolean =>
  error instanceof ApiError && error.code === 'challenge_required';

/**
 * Where to go after signing in: only a path of this site, never another origin. `next` is resolved
 * against the page's origin as the browser's URL parser does (it drops tabs and newlines and reads
 * `\` as `/`, so `/<tab>/evil.example/` is `//evil.example/`; issue 26), and whatever lands
 * elsewhere goes to `/`. The path given back never starts with `//`, which history.replaceState
 * would read as another host.
 */
export function safeNext(search: string, origin: string = window.location.origin): string {
  const next = new URLSearchParams(search).get('next');
  if (next === null || !next.startsWith('/')) return '/';
  let url: URL;
  try {
    url = new URL(next, origin);
  } catch {
    return '/';
  }
  if (url.origin !== origin) return '/';
  return `/${url.pathname.replace(/^\/+/, '')}${url.search}${url.hash}`;
}

function SecondStep({ challenge, onRestart }: { challenge: string; onRestart: () => void }) {
  const api = useEndpoints();
  const client = useQueryClient();
  const [code, setCode] = useState('');
  const verify = useMutation({
    mutationFn: api.secondFactor,
    onSuccess: (view) => startSession(client, view),
    onError: (error) => {
      // The challenge expired or was used: only a new sign-in helps.
      if (error instanceof ApiError && error.code === 'unauthenticated') onRestart();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (code.trim() !== '') verify.mutate({ challenge, code: code.trim() });
  };
  return (
    <form className="form" onSubmit={submit} noValidate>
      <p>Enter the 6-digit code from your authenticator app, or one of your recovery codes.</p>
      <CodeField
        id="sign-in-code"
        label="Authentication code"
        inputMode="text"
        required
        value={code}
        onChange={setCode}
      />
      <ErrorMessage action="Could not sign in" error={verify.error} />
      <button type="submit" className="button button-primary button-wide" disabled={verify.isPending}>
        {verify.isPending ? 'Verifying…' : 'Verify'}
      </button>
      <button type="button" className="button button-wide" onClick={onRestart}>
        Start again
      </button>
    </form>
  );
}

export function SignInPage() {
  const api = useEndpoints();
  const client = useQueryClient();
  const session = useSession();
  const search = useSearch();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  // A reset link used by a member with two factors leaves its challenge here.
  const [challenge, setChallenge] = useState<string | null>(
    () => client.getQueryData<SecondFactorChallenge>(keys.pendingChallenge)?.challenge ?? null,
  );
  const [restarted, setRestarted] = useState(false);
  // The proof of work: asked for once (stays for the page's life), the solved payload not yet
  // spent, whether an attempt waits for one, and the widget's round (a new one: a new challenge).
  const [challenged, setChallenged] = useState(false);
  const [solution, setSolution] = useState<string | null>(null);
  const [waiting, setWaiting] = useState(false);
  const [round, setRound] = useState(0);
  const resubmits = useRef(0);
  const signIn = useMutation({
    mutationFn: api.signIn,
    onSuccess: (answer) => {
      if (isChallenge(answer)) {
        setPassword('');
        setChallenge(answer.challenge);
      } else startSession(client, answer);
    },
    onError: (error) => {
      if (!isChallengeRequired(error)) return;
      setChallenged(true);
      if (resubmits.current < AUTO_RESUBMITS) setWaiting(true);
    },
  });

  const send = (altcha: string | null) => {
    if (altcha !== null) {
      // Good once: the widget starts on the next one at once.
      setSolution(null);
      setRound((r) => r + 1);
    }
    signIn.mutate({ email: email.trim(), password, ...(altcha === null ? {} : { altcha }) });
  };
  // An attempt that waits goes as soon as a solution is there (solved now, or before the 428).
  useEffect(() => {
    if (!waiting || solution === null) return;
    setWaiting(false);
    resubmits.current += 1;
    send(solution);
  });

  if (session.data) return <Redirect to={safeNext(search)} replace />;

  const restart = () => {
    client.removeQueries({ queryKey: keys.pendingChallenge });
    signIn.reset();
    setChallenge(null);
    setRestarted(true);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setRestarted(false);
    resubmits.current = 0;
    if (challenged && solution === null) setWaiting(true);
    else send(solution);
  };
  const busy = signIn.isPending || waiting;
  return (
    <AuthFrame title="Sign in">
      {challenge !== null ? (
        <SecondStep challenge={challenge} onRestart={restart} />
      ) : (
        <form className="form" onSubmit={submit} noValidate>
          {restarted ? (
            <p className="notice" role="status">
              Sign in again with your password.
            </p>
          ) : null}
          <div className="field">
            <label htmlFor="sign-in-email">E-mail</label>
            <input
              id="sign-in-email"
              className="input"
              type="email"
              autoComplete="username"
              required
              value={email}
              onChange={(event) => setEmail(event.target.value)}
            />
          </div>
          <div className="field">
            <label htmlFor="sign-in-password">Password</label>
            <input
              id="sign-in-password"
              className="input"
              type="password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(event) => setPassword(event.target.value)}
            />
          </div>
          {challenged ? (
            <Suspense fallback={<p className="loading">Loading the proof-of-work puzzle…</p>}>
              <ProofOfWork key={round} onSolved={setSolution} />
            </Suspense>
          ) : null}
          {waiting ? (
            <p className="notice" role="status">
              After several failed attempts, your browser solves a proof-of-work puzzle before signing in.
              Solving a proof-of-work puzzle…
            </p>
          ) : (
            <ErrorMessage action="Could not sign in" error={signIn.error} />
          )}
          <button type="submit" className="button button-primary button-wide" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      )}
      <p className="auth-links">
        <Link href="/forgot-password">Forgot your password?</Link>
      </p>
    </AuthFrame>
  );
}
