import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildClientFiles, GENERATED_DIR, REGENERATE } from '../scripts/client-document.js';

describe('the TypeScript client (clients/typescript)', () => {
  it(`has generated files equal to what docs/openapi.json and src/errors.ts give (run \`${REGENERATE}\` when this fails)`, async () => {
    for (const [name, expected] of Object.entries(await buildClientFiles())) {
      const committed = readFileSync(new URL(name, GENERATED_DIR), 'utf8');
      expect(committed, `clients/typescript/src/generated/${name} is stale: run \`${REGENERATE}\``).toBe(
        expected,
      );
    }
  });
});
