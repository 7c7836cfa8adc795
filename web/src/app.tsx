/**
 * The app: its routes, the gate that sends a visitor without a session to /sign-in (and back
 * afterwards), and `createServices`, the wiring shared by main.tsx and the component tests so
 * that both run the same client (CSRF token from the session, 401 ends the session).
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link, Redirect, Route, Router, Switch, useLocation, useSearch, type BaseLocationHook } from 'wouter';
import { ApiError, createApiClient, type Fetch } from './api/client';
import type { SessionView } from './api/contract';
import { endSession, keys, useSession } from './api/queries';
import { ServicesProvider, type Services } from './api/services';
import type { ListParserFactory } from './lists/parser';
import { PageTitle, Shell } from './components/shell';
import { ErrorMessage, Loading } from './components/status';
import { FiltersPage } from './pages/filters';
import { ForgotPasswordPage } from './pages/forgot-password';
import { KeysPage } from './pages/keys';
import { OutcomeSourcesPage } from './pages/outcome-sources';
import { ListDetailPage } from './pages/list-detail';
import { ListsPage } from './pages/lists';
import { OperatorPage } from './pages/operator';
import { OutcomesPage } from './pages/outcomes';
import { OverviewPage } from './pages/overview';
import { SetPasswordPage } from './pages/set-password';
import { SettingsPage } from './pages/settings';
import { SecurityLogPage } from './pages/security';
import { SignInPage } from './pages/sign-in';
import { TwoFactorRequiredPage } from './pages/two-factor';
import { VerifyPage } from './pages/verify';
import { ConfirmEmailPage } from './pages/confirm-email';

/** Client errors are answers, not hiccups: only network failures and 5xx are retried (twice). */
function retry(failures: number, error: unknown): boolean {
  if (error instanceof ApiError && error.status !== 0 && error.status < 500) return false;
  return failures < 2;
}

export function createQueryClient(): QueryClient {
  return new QueryClient({ defaultOptions: { queries: { retry }, mutations: { retry: false } } });
}

export function createServices(client: QueryClient, fetch: Fetch, listParser: ListParserFactory): Services {
  const api = createApiClient({
    fetch,
    csrfToken: () => client.getQueryData<SessionView | null>(keys.session)?.csrf_token ?? null,
    onUnauthenticated: () => endSession(client),
  });
  return { api, listParser };
}

function NotFound() {
  return (
    <>
      <PageTitle title="Not found">Page not found</PageTitle>
      <p>
        There is nothing at this address. <Link href="/">Go to the overview</Link>.
      </p>
    </>
  );
}

function SignedIn() {
  const session = useSession();
  const [location] = useLocation();
  const search = useSearch();
  if (session.isPending) {
    return (
      <main id="main" className="auth">
        <Loading what="your session" />
      </main>
    );
  }
  if (session.isError) {
    return (
      <main id="main" className="auth">
        <ErrorMessage action="Could not reach the service" error={session.error} />
        <button type="button" className="button" onClick={() => void session.refetch()}>
          Try again
        </button>
      </main>
    );
  }
  if (!session.data) {
    const here = `${location}${search ? `?${search}` : ''}`;
    const next = here === '/' ? '' : `?next=${encodeURIComponent(here)}`;
    return <Redirect to={`/sign-in${next}`} replace />;
  }
  if (
    session.data.account === null &&
    !(session.data.two_factor.required && !session.data.two_factor.enabled)
  ) {
    // An operator in no account has the console; anyone else signed in with no account (to
    // accept an invitation) has no pages.
    if (session.data.person.operator)
      return (
        <Shell session={session.data}>
          <Switch>
            <Route path="/operator" component={OperatorPage} />
            <Route>
              <Redirect to="/operator" replace />
            </Route>
          </Switch>
        </Shell>
      );
    return (
      <Shell session={session.data}>
        <PageTitle title="No account">You are not a member of any account</PageTitle>
        <p>
          Open the invitation link you were sent to join an account (you stay signed in), or ask an account
          owner to invite you.
        </p>
      </Shell>
    );
  }
  if (session.data.two_factor.required && !session.data.two_factor.enabled) {
    // The account requires two factors: every other page would be refused (403) until then.
    return (
      <Shell session={session.data}>
        <TwoFactorRequiredPage />
      </Shell>
    );
  }
  return (
    <Shell session={session.data}>
      <Switch>
        <Route path="/" component={OverviewPage} />
        <Route path="/keys" component={KeysPage} />
        <Route path="/integrations" component={OutcomeSourcesPage} />
        <Route path="/filters" component={FiltersPage} />
        <Route path="/lists" component={ListsPage} />
        <Route path="/lists/:id">{(params) => <ListDetailPage key={params.id} id={params.id} />}</Route>
        <Route path="/verify" component={VerifyPage} />
        <Route path="/outcomes" component={OutcomesPage} />
        <Route path="/settings" component={SettingsPage} />
        <Route path="/settings/security-log" component={SecurityLogPage} />
        <Route path="/operator" component={OperatorPage} />
        <Route component={NotFound} />
      </Switch>
    </Shell>
  );
}

export function App() {
  return (
    <Switch>
      <Route path="/sign-in" component={SignInPage} />
      <Route path="/forgot-password" component={ForgotPasswordPage} />
      <Route path="/accept-invite">
        <SetPasswordPage mode="invite" />
      </Route>
      <Route path="/reset-password">
        <SetPasswordPage mode="reset" />
      </Route>
      <Route path="/confirm-email" component={ConfirmEmailPage} />
      <Route>
        <SignedIn />
      </Route>
    </Switch>
  );
}

/** Providers and router around the app; tests pass a memory location, the browser its own. */
export function AppRoot({
  client,
  services,
  location,
  searchHook,
  children = <App />,
}: {
  client: QueryClient;
  services: Services;
  location?: BaseLocationHook;
  searchHook?: () => string;
  children?: ReactNode;
}) {
  return (
    <QueryClientProvider client={client}>
      <ServicesProvider services={services}>
        <Router {...(location ? { hook: location } : {})} {...(searchHook ? { searchHook } : {})}>
          {children}
        </Router>
      </ServicesProvider>
    </QueryClientProvider>
  );
}
