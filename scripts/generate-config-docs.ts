/** `npm run docs:config`: writes docs/configuration.md from the table of settings and the commands. */
import { writeFileSync } from 'node:fs';
import { buildProgram } from '../src/cli/program.js';
import { configurationDocument } from './configuration-document.js';

const target = new URL('../docs/configuration.md', import.meta.url);
writeFileSync(target, configurationDocument(await buildProgram()));
process.stdout.write(`wrote ${target.pathname}\n`);
