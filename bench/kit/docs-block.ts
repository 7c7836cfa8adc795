/**
 * Writes a benchmark's figures into docs/benchmarks.md between `<!-- NAME:start -->` and
 * `<!-- NAME:end -->`; the first time, at the end of the "## Batch" section.
 */
import { readFile, writeFile } from 'node:fs/promises';

export async function writeDocsBlock(name: string, text: string): Promise<void> {
  const path = new URL('../../docs/benchmarks.md', import.meta.url);
  const doc = await readFile(path, 'utf8');
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${start}\n${text}\n${end}`;
  let next: string;
  if (doc.includes(start) && doc.includes(end)) {
    next = doc.slice(0, doc.indexOf(start)) + block + doc.slice(doc.indexOf(end) + end.length);
  } else {
    const batch = doc.indexOf('## Batch');
    const after = batch === -1 ? -1 : doc.indexOf('\n## ', batch + 1);
    next =
      after === -1
        ? `${doc.trimEnd()}\n\n${block}\n`
        : `${doc.slice(0, after).trimEnd()}\n\n${block}\n${doc.slice(after)}`;
  }
  await writeFile(path, next);
}
