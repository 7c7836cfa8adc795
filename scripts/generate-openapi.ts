/** `npm run openapi`: writes docs/openapi.json from the route schemas. */
import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from './openapi-document.js';

const target = new URL('../docs/openapi.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(await buildOpenApiDocument(), null, 2)}\n`);
process.stdout.write(`wrote ${target.pathname}\n`);
