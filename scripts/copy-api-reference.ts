/**
 * Part of `npm run build`: copies the API reference's renderer (swagger-ui-dist's browser bundle
 * and stylesheet, a development dependency) to dist/api-reference/, which `serve` gives at
 * /docs/swagger-ui-bundle.js and /docs/swagger-ui.css (src/dashboard/api-reference.ts), each with
 * a gzipped copy beside it for browsers that accept gzip (@fastify/static's preCompressed).
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants, gzipSync } from 'node:zlib';
import { BUILT_DIR, RENDERER_FILES, installedRenderer } from '../src/dashboard/api-reference.js';

const source = installedRenderer();
if (source === null) throw new Error('swagger-ui-dist is not installed: run `npm ci`');
mkdirSync(BUILT_DIR, { recursive: true });
for (const file of RENDERER_FILES) {
  const from = join(source, file);
  copyFileSync(from, join(BUILT_DIR, file));
  const gzipped = gzipSync(readFileSync(from), { level: constants.Z_BEST_COMPRESSION });
  writeFileSync(join(BUILT_DIR, `${file}.gz`), gzipped);
  process.stdout.write(`copied ${from} to ${BUILT_DIR} (and .gz, ${gzipped.length} bytes)\n`);
}
