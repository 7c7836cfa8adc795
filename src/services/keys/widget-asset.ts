/**
 * The built widget (web/widget/, built by `npm run build` into dist/widget/widget.js), as the v1
 * API serves it (GET /widget.js) and the dashboard shows its snippet: the bytes, the SRI hash
 * (sha384) and the ETag. Read once per process: a new build is served after a restart.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** dist/widget/widget.js of this package, from src/services/keys (tsx) and dist/services/keys (built) alike. */
export const DEFAULT_WIDGET_FILE = fileURLToPath(new URL('../../../dist/widget/widget.js', import.meta.url));

/**
 * One URL (`/widget.js`) that a snippet can keep: a day in every cache, then revalidated by ETag.
 * Not `immutable`: after an upgrade the same URL serves the new build (whose pages then need the
 * new `integrity`, shown on the keys page).
 */
export const WIDGET_CACHE_CONTROL = 'public, max-age=86400';

export interface WidgetAsset {
  body: Buffer;
  /** `sha384-…`, for the script tag's `integrity`. */
  integrity: string;
  etag: string;
}

const loaded = new Map<string, WidgetAsset | null>();

/** The widget's file and hashes, or null when the package was not built. */
export function loadWidgetAsset(file: string = DEFAULT_WIDGET_FILE): WidgetAsset | null {
  if (loaded.has(file)) return loaded.get(file)!;
  let asset: WidgetAsset | null = null;
  try {
    const body = readFileSync(file);
    const digest = createHash('sha384').update(body).digest('base64');
    asset = { body, integrity: `sha384-${digest}`, etag: `"${digest.slice(0, 27).replace(/[+/]/g, '_')}"` };
  } catch {
    asset = null;
  }
  // A missing build is looked for again on the next request (a build may land meanwhile).
  if (asset !== null) loaded.set(file, asset);
  return asset;
}

/**
 * What a page adds to use the widget with a publishable key: the script tag pinned to this build
 * by its integrity hash, and an address field. The dashboard's keys page shows the same
 * (web/src/pages/widget-snippet.tsx `snippetFor`); `keys create --publishable` prints it.
 */
export function widgetSnippet(widget: { url: string; integrity: string }, key: string): string {
  return [
    `<script src="${widget.url}" integrity="${widget.integrity}" crossorigin="anonymous"`,
    `  data-key="${key}" defer></script>`,
    '<input type="email" name="email" autocomplete="email" data-mailverdict>',
  ].join('\n');
}
