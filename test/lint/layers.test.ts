/**
 * The house's directions (eslint.config.js, docs/architecture.md) are lint rules: a wrong import
 * fails `npm run lint`. Each case lints a few lines as if they were a file of the layer named.
 */
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
/**
 * Only the rule under test, without type information: the project's config asks for the whole
 * program's types (projectService), which costs 10-30 s to build on two cores and which
 * `no-restricted-imports` does not need. `npm run lint` runs everything with types.
 */
const LAYER_RULE = '@typescript-eslint/no-restricted-imports';
const eslint = new ESLint({
  cwd: root,
  ruleFilter: ({ ruleId }) => ruleId === LAYER_RULE,
  overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } } },
});

/** The layer messages of `code` linted as the file at `filePath` (an existing file of that layer). */
async function refusals(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.filter((m) => m.ruleId === LAYER_RULE).map((m) => m.message);
}

describe('import directions', { timeout: 120_000 }, () => {
  it('refuses a service that imports an edge', async () => {
    const messages = await refusals(
      'src/services/usage/plans.ts',
      "import type { KeyList } from '../dashboard/contract.js';\nexport type Keys = KeyList;\n",
    );
    expect(messages).toEqual([expect.stringContaining('services must not import dashboard/')]);
  });

  it('refuses an edge that reads the store, and lets it name the store types', async () => {
    const messages = await refusals(
      'src/dashboard/security.ts',
      "import { findUploadByJob } from '../store/list-upload.store.js';\n" +
        "import type { Executor } from '../store/executor.js';\n" +
        'export const read = (db: Executor) => findUploadByJob(db, "job");\n',
    );
    expect(messages).toEqual([expect.stringContaining('dashboard must not import store/')]);
  });

  it('refuses an edge that imports another edge', async () => {
    const messages = await refusals(
      'src/api/app.ts',
      "import { dashboardPlugin } from '../dashboard/plugin.js';\nexport const plugin = dashboardPlugin;\n",
    );
    expect(messages).toEqual([expect.stringContaining('api must not import dashboard/')]);
  });

  it('refuses an MCP tool that reaches past the API (a service, the engine, the API edge)', async () => {
    const messages = await refusals(
      'src/mcp/tools.ts',
      "import { getUsage } from '../services/usage/usage.service.js';\n" +
        "import { createVerifier } from '../engine/verifier.js';\n" +
        "import { verifyBodySchema } from '../api/schemas.js';\n" +
        'export const all = [getUsage, createVerifier, verifyBodySchema];\n',
    );
    expect(messages).toEqual([
      expect.stringContaining('mcp must not import services/'),
      expect.stringContaining('mcp must not import engine/'),
      expect.stringContaining('mcp must not import api/'),
    ]);
  });

  it('refuses an adapter that imports an edge', async () => {
    const messages = await refusals(
      'src/redis/rate-limiter.ts',
      "import { setRateLimitHeaders } from '../api/rate-limit.js';\nexport const set = setRateLimitHeaders;\n",
    );
    expect(messages).toEqual([expect.stringContaining('redis must not import api/')]);
  });

  it('lets a service use the store and the engine', async () => {
    const messages = await refusals(
      'src/services/usage/plans.ts',
      "import { findKeyById } from '../store/key.store.js';\nimport { STATUSES } from '../engine/types.js';\n" +
        'export const both = [findKeyById, STATUSES];\n',
    );
    expect(messages).toEqual([]);
  });

  it('refuses an engine part that imports a part above it, even for a type', async () => {
    const messages = await refusals(
      'src/engine/smtp/session.ts',
      "import type { HostLimiter } from '../sessions/host-limiter.js';\n" +
        "import { SmtpProber } from '../probe.js';\n" +
        'export type Both = [HostLimiter, SmtpProber];\n',
    );
    expect(messages).toEqual([
      expect.stringContaining('engine/smtp must not import engine/sessions'),
      expect.stringContaining('engine/smtp must not import engine/probe.ts'),
    ]);
  });

  it('lets an engine part import the parts below it and the leaves', async () => {
    const messages = await refusals(
      'src/engine/sessions/host-limiter.ts',
      "import type { Egress } from '../egress/egress.js';\n" +
        "import { stepDeadlines } from '../smtp/session.js';\n" +
        "import type { SmtpOptions } from '../types.js';\n" +
        'export type Uses = [Egress, typeof stepDeadlines, SmtpOptions];\n',
    );
    expect(messages).toEqual([]);
  });

  it('lets the web app take only the contract types from the server', async () => {
    const typeOnly = await refusals(
      'web/src/api/contract.ts',
      "import type { KeyList } from '../../../src/dashboard/contract.js';\nexport type Keys = KeyList;\n",
    );
    const value = await refusals(
      'web/src/api/contract.ts',
      "import { DASHBOARD_API } from '../../../src/dashboard/contract.js';\nexport const api = DASHBOARD_API;\n",
    );
    expect(typeOnly).toEqual([]);
    expect(value).toEqual([expect.stringContaining('web/ takes the contract')]);
  });
});
