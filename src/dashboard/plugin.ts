/**
 * The account dashboard (docs/dashboard.md): its JSON API under /dashboard/api and its pages at
 * `/`, in one encapsulated Fastify scope that src/runtime.ts registers beside the v1 API's. Its
 * content-type parsers, error handler, cookie, security headers and guards live here and change
 * nothing of v1's.
 */
import fastifyCookie from '@fastify/cookie';
import fastifyHelmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { apiReferencePlugin } from './api-reference.js';
import { DASHBOARD_API } from './contract.js';
import type { DashboardDeps, DashboardOptions } from './deps.js';
import { installDashboardErrorHandler } from './errors.js';
import { DEFAULT_WEB_DIR, pagesPlugin } from './pages.js';
import { accountRoutes } from './routes/account.routes.js';
import { auditRoutes } from './routes/audit.routes.js';
import { filtersRoutes } from './routes/filters.routes.js';
import { jobsRoutes } from './routes/jobs.routes.js';
import { keysRoutes } from './routes/keys.routes.js';
import { outcomesRoutes } from './routes/outcomes.routes.js';
import { operatorRoutes } from './routes/operator.routes.js';
import { outcomeSourcesRoutes } from './routes/outcome-sources.routes.js';
import { sessionRoutes } from './routes/session.routes.js';
import { twoFactorRoutes } from './routes/two-factor.routes.js';
import { CONTENT_SECURITY_POLICY, installGuards, sessionCookie, type GuardDeps } from './security.js';

export function dashboardPlugin(options: DashboardOptions) {
  return async (app: FastifyInstance): Promise<void> => {
    const { webDir: _webDir, memberMailer: _memberMailer, ...shared } = options;
    const deps: DashboardDeps = {
      ...shared,
      webDir: options.webDir ?? DEFAULT_WEB_DIR,
      mailer: options.memberMailer,
      cookie: sessionCookie(options.config.publicBaseUrl),
    };
    // The dashboard's API is the app's, not part of the public v1 document (docs/openapi.json).
    app.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });

    await app.register(fastifyCookie);
    await app.register(fastifyHelmet, {
      contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY },
      referrerPolicy: { policy: 'no-referrer' },
      xFrameOptions: { action: 'deny' },
      // Over plain http (development) a browser ignores it anyway; over https it pins https.
      strictTransportSecurity: deps.cookie.secure,
    });
    installDashboardErrorHandler(app);

    const guard: GuardDeps = {
      db: deps.db,
      clock: deps.clock,
      settings: deps.config,
      publicBaseUrl: deps.config.publicBaseUrl,
      listen: { host: deps.config.host, port: deps.config.port },
      cookie: deps.cookie,
    };
    await app.register(
      async (api) => {
        // An empty JSON body is no body (POST /keys/:id/revoke and the like carry none).
        const json = api.getDefaultJsonParser('error', 'error');
        api.removeContentTypeParser('application/json');
        api.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
          const text = typeof body === 'string' ? body : body.toString('utf8');
          if (text === '') done(null, undefined);
          else void json(request, text, done);
        });
        installGuards(api, guard);
        // Every answer of the dashboard's API is one person's (the session carries the CSRF token,
        // a new key its secret): no browser or proxy cache may keep it (issue 16).
        api.addHook('onSend', async (_request, reply, payload) => {
          if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
          return payload;
        });
        await api.register(sessionRoutes(deps, guard));
        await api.register(twoFactorRoutes(deps));
        await api.register(accountRoutes(deps));
        await api.register(keysRoutes(deps));
        await api.register(outcomeSourcesRoutes(deps));
        await api.register(filtersRoutes(deps));
        await api.register(jobsRoutes(deps));
        await api.register(auditRoutes(deps));
        await api.register(outcomesRoutes(deps));
        await api.register(operatorRoutes(deps));
        // Unknown dashboard routes (and known ones with another method) in the dashboard's envelope,
        // behind the same guards as every route that needs a session: without one they answer 401
        // as an operator route does, so an anonymous caller cannot tell the two apart (issue 26).
        api.all('/*', { schema: { hide: true } }, async (request) => {
          throw new AppError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`);
        });
      },
      { prefix: DASHBOARD_API },
    );
    await app.register(apiReferencePlugin());
    await app.register(pagesPlugin(deps.webDir));
  };
}
