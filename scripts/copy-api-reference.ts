/**
 * Part of `npm run build`: copies Scalar's standalone bundle (a development dependency) to
 * dist/api-reference/scalar.js, which `serve` gives at /docs/scalar.js (src/dashboard/api-reference.ts).
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { constants, gzipSync } from 'node:zlib';
import { BUILT_BUNDLE, installedBundle } from '../src/dashboard/api-reference.js';

const bundle = installedBundle();
if (bundle === null) throw new Error('@scalar/api-reference is not installed: run `npm ci`');
mkdirSync(dirname(BUILT_BUNDLE), { recursive: true });
copyFileSync(bundle, BUILT_BUNDLE);
// Served instead to browsers that accept gzip (@fastify/static's preCompressed): 4.9 MB -> 1.4 MB.
const gzipped = gzipSync(readFileSync(bundle), { level: constants.Z_BEST_COMPRESSION });
writeFileSync(`${BUILT_BUNDLE}.gz`, gzipped);
process.stdout.write(`copied ${bundle} to ${BUILT_BUNDLE} (and .gz, ${gzipped.length} bytes)\n`);
