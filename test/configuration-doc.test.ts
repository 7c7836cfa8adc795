/**
 * One table of settings (SETTINGS in src/config.ts): the commands' flags and docs/configuration.md
 * are made from it, so every documented flag is accepted and every accepted flag documented.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/cli/program.js';
import { SETTINGS, type Setting } from '../src/config.js';
import { commandsOf, configurationDocument } from '../scripts/configuration-document.js';

const ROOT = new URL('../', import.meta.url);
/** Every command registered (the CLI itself loads only the one it runs). */
const program = await buildProgram();
const read = (path: string): string => readFileSync(new URL(path, ROOT), 'utf8');

/** Flags the docs name that belong to other programs, not to `mailverdict`. */
const NOT_OURS: Record<string, string> = {
  '--import': 'node',
  '--cpu-prof': 'node',
  '--max-old-space-size': 'node',
  '--max-warnings': 'eslint',
  '--runs': 'npm run fuzz',
  '--duration': 'npm run soak',
  '--only': 'npm run bench:scale',
  '--only-default': 'npm run bench:latency',
  '--mta': 'bench/batch-probe.bench.ts',
  '--rounds': 'bench/provider-cap.bench.ts',
  '--server-root': 'bench/api.bench.ts',
  '--trace-gc': 'node',
  '--max-seconds': 'npm run bench:outcomes',
  '--data-binary': 'curl (docs/outcomes.md, piping a bounce)',
  '--max-time': 'curl (docs/outcomes.md, piping a bounce)',
  '--heap-growing-percent': 'node (V8)',
  '--addresses': 'bench/batch-cycle.bench.ts',
  '--lengths': 'bench/batch-cycle.bench.ts',
  '--live': 'bench/batch-cycle.bench.ts',
  '--tsx': 'bench/batch-cycle.bench.ts',
  '--keys': 'bench/batch-cycle.bench.ts',
  '--heapsnapshot-signal': 'node',
  '--ignore-scripts': 'npm ci (.ci/run)',
  '--no-isolate': 'vitest',
  '--rows': 'bench/xlsx-download.bench.ts, bench/schedule.bench.ts',
  '--sign-ins': 'bench/sign-in.bench.ts',
  '--lookups': 'bench/outcomes.bench.ts',
  '--samples': 'npm run bench:latency:postfix',
  '--quickack': 'npm run bench:latency:postfix',
  '--challenges': 'bench/sign-in.bench.ts',
  '--new-browser': 'bench/sign-in.bench.ts',
  // docs/deploy.md: the container tools' own flags.
  ...Object.fromEntries(
    [
      '--build-arg',
      '--secret',
      '--init',
      '--stop-timeout',
      '--rm',
      '--build',
      '--scale',
      '--index',
      '--no-deps',
      '--network',
    ].map((flag) => [flag, 'docker / podman (docs/deploy.md, docs/benchmarks.md)']),
  ),
  ...Object.fromEntries(
    ['--from-literal', '--for', '--timeout'].map((flag) => [flag, 'kubectl (docs/deploy.md)']),
  ),
  '--omit': 'npm prune (docs/deploy.md)',
  // The dashboard's verdict colours (docs/dashboard.md): CSS custom properties `--verdict-*`.
  '--verdict-': 'CSS custom properties of web/src/styles.css',
  // The widget's CSS custom properties (docs/widget.md, "Styling"), not flags.
  ...Object.fromEntries(
    [
      'color-ok',
      'color-warning',
      'color-error',
      'color-checking',
      'color-unknown',
      'mark-width',
      'link-color',
      'focus-color',
      'font-size',
      'gap',
    ].map((name) => [`--mailverdict-${name}`, 'CSS custom property of web/widget/widget.ts']),
  ),
};

/** Every long flag some command of the program accepts, with commander's own. */
function acceptedFlags(): Set<string> {
  const flags = new Set(['--help', '--version']);
  for (const { command } of commandsOf(program))
    for (const option of command.options) if (option.long) flags.add(option.long);
  return flags;
}

function documentedFlags(): Map<string, string> {
  const files = [
    'README.md',
    ...readdirSync(new URL('docs/', ROOT))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const found = new Map<string, string>();
  for (const file of files)
    for (const [flag] of read(file).matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g))
      if (!found.has(flag)) found.set(flag, file);
  return found;
}

describe('the table of settings', () => {
  it('docs/configuration.md is the document the code generates (run `npm run docs:config` when this fails)', () => {
    expect(read('docs/configuration.md')).toBe(configurationDocument(program));
  });

  it('accepts every flag that README.md and docs/ name', () => {
    const accepted = acceptedFlags();
    const unknown = [...documentedFlags()]
      .filter(([flag]) => !accepted.has(flag) && !(flag in NOT_OURS))
      .map(([flag, file]) => `${flag} (${file})`);
    expect(unknown).toEqual([]);
  });

  it('documents every accepted flag in docs/configuration.md', () => {
    const doc = read('docs/configuration.md');
    const missing = [...acceptedFlags()]
      .filter((flag) => !['--help', '--version'].includes(flag))
      .filter((flag) => !new RegExp(`\`${flag}[\\s\`]`).test(doc));
    expect(missing).toEqual([]);
  });

  it('names each setting by the attribute commander gives its flag', () => {
    for (const [key, s] of Object.entries(SETTINGS) as [string, Setting<unknown>][])
      expect(new Option(s.flag).attributeName(), s.flag).toBe(key);
  });

  it('gives each command exactly the settings whose row names it, and no other option a setting’s name', () => {
    for (const { path, command } of commandsOf(program)) {
      // A group (`members`) only holds its sub-commands, which take its settings.
      if (command.commands.length > 0) continue;
      const expected = (Object.values(SETTINGS) as Setting<unknown>[])
        .filter((s) => s.commands.some((name) => name === path || path.startsWith(`${name} `)))
        .map((s) => s.flag);
      const settings = command.options.filter((o) => Object.hasOwn(SETTINGS, o.attributeName()));
      expect(
        settings.map((o) => o.flags),
        path,
      ).toEqual(expected);
    }
  });

  it('lets `serve` take --trust-proxy and --auth-failure-rate-limit', () => {
    const serve = program.commands.find((c) => c.name() === 'serve')!;
    const longs = serve.options.map((o) => o.long);
    expect(longs).toContain('--trust-proxy');
    expect(longs).toContain('--auth-failure-rate-limit');
  });
});
