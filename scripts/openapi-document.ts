/**
 * Builds the OpenAPI document of the v1 API from the route schemas, on a throwaway app with a
 * temporary store. Used by `npm run openapi` and by the test that keeps docs/openapi.json fresh.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { buildApp } from '../src/api/app.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { TRUST_OFF } from '../src/engine/dns/resolver-trust.js';
import type { Verifier } from '../src/engine/types.js';
import { openDatabase } from '../src/store/db.js';
import { createVerdictLog } from '../src/services/outcomes/verdict-log.js';

/** Routes are never called here, so the engine is not needed. */
const unusedVerifier: Verifier = {
  verify: () => Promise.reject(new Error('not used')),
  verifyMailHosts: () => Promise.reject(new Error('not used')),
  verifyOffline: () => {
    throw new Error('not used');
  },
  close: async () => {},
};

export async function buildOpenApiDocument(): Promise<unknown> {
  const dir = mkdtempSync(join(tmpdir(), 'mailverdict-openapi-'));
  const config = loadConfig({ dataDir: dir }, {});
  const db = openDatabase(config);
  const logger = pino({ level: 'silent' });
  const app = buildApp({
    config,
    db,
    clock: systemClock,
    logger,
    verifier: unusedVerifier,
    dnsTrust: TRUST_OFF,
    verdictLog: createVerdictLog({ db, clock: systemClock, logger }),
  });
  try {
    await app.ready();
    return app.swagger();
  } finally {
    await app.close();
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}
