/**
 * The DOM the component tests run in: jsdom, plus the browser features it lacks that the app
 * uses. Nothing of the app is faked here; the network is faked per test (fake-server.ts). A test
 * file that runs in plain Node (`@vitest-environment node`) skips all of it.
 */
import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';

// findBy* and waitFor wait up to 10 s instead of 1 s: a page that renders after its fetches ran
// out of the default second on a loaded two-core machine (keys and overview, at load 25). A page
// that never renders still fails.
configure({ asyncUtilTimeout: 10_000 });

if (typeof document !== 'undefined') {
  afterEach(() => {
    cleanup();
    window.history.replaceState(null, '', '/');
  });

  // jsdom has <dialog> without its modal methods: open and close it as a browser would.
  if (typeof HTMLDialogElement.prototype.showModal !== 'function') {
    Object.assign(HTMLDialogElement.prototype, {
      showModal(this: HTMLDialogElement) {
        this.setAttribute('open', '');
      },
      close(this: HTMLDialogElement) {
        this.removeAttribute('open');
        this.dispatchEvent(new Event('close'));
      },
    });
  }

  // jsdom has no canvas (it would log "not implemented"): the chart falls back to its table.
  Object.assign(HTMLCanvasElement.prototype, { getContext: () => null });

  // jsdom has no media queries (uPlot asks for the pixel ratio when it loads): nothing matches.
  if (typeof window.matchMedia !== 'function') {
    Object.assign(window, {
      matchMedia: (query: string) => ({
        matches: false,
        media: query,
        onchange: null,
        addEventListener: () => {},
        removeEventListener: () => {},
        addListener: () => {},
        removeListener: () => {},
        dispatchEvent: () => false,
      }),
    });
  }
}
