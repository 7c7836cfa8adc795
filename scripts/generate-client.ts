/** `npm run client:generate`: writes clients/typescript/src/generated/ (see client-document.ts). */
import { writeFileSync } from 'node:fs';
import { buildClientFiles, GENERATED_DIR } from './client-document.js';

for (const [name, contents] of Object.entries(await buildClientFiles())) {
  const target = new URL(name, GENERATED_DIR);
  writeFileSync(target, contents);
  process.stdout.write(`wrote ${target.pathname}\n`);
}
