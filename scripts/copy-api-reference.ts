/**
 * Part of `npm run build`: copies Scalar's standalone bundle (a development dependency) to
 * dist/api-reference/scalar.js, which `serve` gives at /docs/scalar.js (src/dashboard/api-reference.ts).
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { BUILT_BUNDLE, installedBundle } from '../src/dashboard/api-reference.js';

const bundle = installedBundle();
if (bundle === null) throw new Error('@scalar/api-reference is not installed: run `npm ci`');
mkdirSync(dirname(BUILT_BUNDLE), { recursive: true });
copyFileSync(bundle, BUILT_BUNDLE);
process.stdout.write(`copied ${bundle} to ${BUILT_BUNDLE}\n`);
