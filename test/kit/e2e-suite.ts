/**
 * The hooks every end-to-end suite repeats: `serve` and Chromium started side by side before its
 * tests (then `setup`, such as setting the owner's password), the browser profiles a test opened
 * closed after it, and both stopped at the end. Apart from test/kit/e2e.ts because it registers
 * vitest hooks, which scripts/screenshots.ts (a plain script using e2e.ts) must not import.
 */
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { newContext, startE2e, type Dashboard } from './e2e.js';

export interface E2eSuite {
  /** Set once the suite's beforeAll has run: read it inside tests and hooks. */
  readonly dashboard: Dashboard;
  readonly browser: Browser;
  /** A fresh browser profile on the dashboard, closed after the test. */
  context(options?: BrowserContextOptions): Promise<BrowserContext>;
}

export function useE2eSuite(setup?: (dashboard: Dashboard) => Promise<void>): E2eSuite {
  let dashboard: Dashboard | undefined;
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    ({ dashboard, browser } = await startE2e());
    await setup?.(dashboard);
  }, 60_000);
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the e2e suite has not started: read it inside a test');
    return value;
  };
  return {
    get dashboard() {
      return started(dashboard);
    },
    get browser() {
      return started(browser);
    },
    async context(options = {}) {
      const made = await newContext(started(browser), started(dashboard), options);
      contexts.push(made);
      return made;
    },
  };
}
