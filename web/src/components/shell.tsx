/**
 * The signed-in frame: a sidebar with the six sections (a "Menu" button folds it away at phone
 * width), the member's e-mail and "Sign out", and the page in <main id="main">, reached first
 * with the "Skip to content" link.
 *
 * A person in several accounts gets an account switcher (select "Account"): choosing one moves
 * the session there and starts the app again in it (every page's data is that account's).
 *
 * While the server's DNS resolver is not trusted, every member sees a banner (role "alert") above
 * the page: answers that would say a domain does not exist are unknown, and lists wait.
 *
 * Accessible names: navigation "Main" with links Overview, Lists, Verify, Outcomes, API keys, Filters,
 * Settings;
 * link "API reference" (the server's /docs page, outside the app); link "Operator console"
 * (operators only); select "Account" (several accounts only); buttons "Menu", "Sign out";
 * link "Skip to content".
 */
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import { describeError } from '../api/client';
import type { SessionView } from '../api/contract';
import { endSession, startSession, useServiceStatus } from '../api/queries';
import { useEndpoints } from '../api/endpoints';

const SECTIONS = [
  { href: '/', label: 'Overview' },
  { href: '/lists', label: 'Lists' },
  { href: '/verify', label: 'Verify' },
  { href: '/outcomes', label: 'Outcomes' },
  { href: '/keys', label: 'API keys' },
  { href: '/integrations', label: 'Integrations' },
  { href: '/filters', label: 'Filters' },
  { href: '/settings', label: 'Settings' },
] as const;

const isCurrent = (location: string, href: string) =>
  href === '/' ? location === '/' : location === href || location.startsWith(`${href}/`);

export function Shell({ session, children }: { session: SessionView; children: ReactNode }) {
  const [location, navigate] = useLocation();
  const [open, setOpen] = useState(false);
  const [signOutError, setSignOutError] = useState<string | null>(null);
  const api = useEndpoints();
  const client = useQueryClient();
  useEffect(() => setOpen(false), [location]);

  const [switchError, setSwitchError] = useState<string | null>(null);
  const switchTo = async (accountId: string) => {
    setSwitchError(null);
    try {
      startSession(client, await api.switchAccount(accountId));
    } catch (error) {
      setSwitchError(describeError('Could not switch accounts', error));
      return;
    }
    navigate('/', { replace: true });
  };

  const signOut = async () => {
    try {
      await api.signOut();
    } catch (error) {
      setSignOutError(describeError('Could not sign out', error));
      return;
    }
    endSession(client);
    navigate('/sign-in', { replace: true });
  };

  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">
          <img src="/favicon.svg" alt="" width="24" height="24" />
          mailverdict
        </span>
        <button
          type="button"
          className="button menu-button"
          aria-expanded={open}
          aria-controls="sidebar"
          onClick={() => setOpen((value) => !value)}
        >
          Menu
        </button>
      </header>
      <aside id="sidebar" className={open ? 'sidebar sidebar-open' : 'sidebar'}>
        <span className="brand brand-side">
          <img src="/favicon.svg" alt="" width="24" height="24" />
          mailverdict
        </span>
        <nav aria-label="Main">
          <ul className="nav">
            {(session.account === null ? [] : SECTIONS).map((section) => (
              <li key={section.href}>
                <Link
                  href={section.href}
                  className={isCurrent(location, section.href) ? 'nav-link nav-current' : 'nav-link'}
                  aria-current={isCurrent(location, section.href) ? 'page' : undefined}
                >
                  {section.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <a className="nav-link" href="/docs">
          API reference
        </a>
        {session.person.operator ? (
          <Link href="/operator" className="nav-link">
            Operator console
          </Link>
        ) : null}
        <div className="account">
          <span className="account-email" title={session.person.email}>
            {session.person.email}
          </span>
          {session.account && session.member ? (
            <span className="muted small">
              {session.account.plan} plan · {session.member.role}
            </span>
          ) : (
            <span className="muted small">{session.person.operator ? 'operator · ' : ''}no account</span>
          )}
          {session.memberships.length > 1 ? (
            <div className="field">
              <label htmlFor="account-switcher" className="small">
                Account
              </label>
              <select
                id="account-switcher"
                className="input"
                value={session.account?.id ?? ''}
                onChange={(event) => void switchTo(event.target.value)}
              >
                {session.memberships.map((m) => (
                  <option key={m.account_id} value={m.account_id}>
                    {m.notification_email} · {m.plan} · {m.role}
                  </option>
                ))}
              </select>
              {switchError ? (
                <p role="alert" className="notice notice-error small">
                  {switchError}
                </p>
              ) : null}
            </div>
          ) : null}
          <button type="button" className="button" onClick={() => void signOut()}>
            Sign out
          </button>
          {signOutError ? (
            <p role="alert" className="notice notice-error small">
              {signOutError}
            </p>
          ) : null}
        </div>
      </aside>
      <main id="main" className="main" tabIndex={-1}>
        <ResolverBanner />
        {children}
      </main>
    </div>
  );
}

/** Says, to every member, that live verification cannot be trusted to tell a missing domain now. */
function ResolverBanner() {
  const status = useServiceStatus();
  const resolver = status.data?.dns_resolver;
  if (resolver === undefined || resolver.trusted) return null;
  return (
    <p role="alert" className="notice notice-warn resolver-banner">
      <strong>Live verification is degraded.</strong> The server&rsquo;s DNS resolver is{' '}
      {resolver.state === 'unreachable' ? 'not answering' : 'not telling the truth'}, so answers that would
      say a domain does not exist are shown as <em>unknown</em> (dns_error) and lists wait to be verified.
      Nothing is lost; the server checks again every 30 seconds. Operators: point <code>--dns-server</code> at
      a resolver that tells the truth (<code>mailverdict doctor</code> shows what it answered).
    </p>
  );
}

/** A page's title, also the document's. */
export function PageTitle({ children, title }: { children: ReactNode; title: string }) {
  useEffect(() => {
    document.title = `${title} · mailverdict`;
  }, [title]);
  return <h1 className="page-title">{children}</h1>;
}
