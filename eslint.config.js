// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// ---- the house's directions (docs/architecture.md) ------------------------------------------
//
// Imports point from the edges to the core and never back:
//
//   cli/  api/  dashboard/  jobs/        edges: parse input, call services, format output
//   mcp/                                 an edge that calls the v1 API over HTTP, never a service
//   runtime.ts                           composes a process: the store, Redis, both HTTP edges
//   http/                                what the two HTTP edges share (status table, envelope)
//   services/                            use cases; they own the ports redis/ implements
//   store/   engine/   redis/            persistence | verification | adapters of service ports
//   config.ts errors.ts clock.ts context.ts store/store-errors.ts     leaves
//
// Each layer below lists what it must NOT import; whatever is not listed is allowed. Edges may
// name the store's types (`import type`), never call it: a read or a write goes through a service.

/** A module specifier (always relative in this project) that lands in `target` under src/. */
const into = (target) => `^(\\.\\.?/)+${target}`;
const LAYER = {
  engine: into('engine/'),
  // store/store-errors.ts is a leaf: the table of which store failures are transient.
  store: into('store/(?!store-errors\\.js$)'),
  services: into('services/'),
  redis: into('redis/'),
  http: into('http/'),
  api: into('api/'),
  dashboard: into('dashboard/'),
  jobs: into('jobs/'),
  cli: into('cli/'),
  mcp: into('mcp/'),
  runtime: into('runtime\\.js$'),
  // The command line may open, migrate and copy a store (store/db.ts, migrate.ts, copy.store.ts).
  storeExceptOpening: into('store/(?!(store-errors|db|migrate|copy\\.store)\\.js$)'),
};
const EDGE_WHY =
  'edges sit on top: only runtime.ts and cli/ start them; what two edges share lives in http/ or services/';
const WHY = {
  store: 'only services read and write the store; call a service',
  storeExceptOpening: 'the command line opens, migrates or copies a store; a service does the rest',
  services: 'services sit below the edges and above the store',
  redis: 'redis/ implements ports that services own; runtime.ts picks it',
  http: 'http/ is what the two HTTP edges share',
  api: EDGE_WHY,
  dashboard: EDGE_WHY,
  jobs: EDGE_WHY,
  cli: 'nothing imports the command line',
  mcp: EDGE_WHY,
  runtime: 'runtime.ts composes processes; nothing it composes imports it',
  engine: 'engine/ knows nothing of accounts, HTTP or storage',
};

/** The patterns that refuse `forbidden` layers to `name`; `typesFrom` may still be named with `import type`. */
function refusing(name, forbidden, typesFrom = []) {
  return forbidden.map((target) => ({
    regex: LAYER[target],
    caseSensitive: true,
    allowTypeImports: typesFrom.includes(target),
    message: `${name} must not import ${target.replace('ExceptOpening', '')}/: ${WHY[target]} (docs/architecture.md).`,
  }));
}

/** `files` must not import the `forbidden` layers; `typesFrom` may still be named with `import type`. */
function layer(name, files, forbidden, { typesFrom = [], ignores = [], more = [] } = {}) {
  return {
    name: `layers/${name}`,
    files,
    ignores,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [...refusing(name, forbidden, typesFrom), ...more] },
      ],
    },
  };
}

// ---- the engine's directions (docs/architecture.md, "Inside the engine") --------------------
//
// From the top down; a part may import the parts below it (and the engine's leaves: types.ts,
// outcome.ts, verdict.ts, syntax.ts, coordination*.ts, ttl-map.ts, background.ts), never above:
//
//   index.ts      the library's face
//   batch/        the batch engine: groups, pacing, pooled sessions
//   verifier.ts   one verification: syntax, lists, DNS, the probe, the verdict
//   probe.ts      one verification's SMTP probe: MX order, Happy Eyeballs, one transaction
//   sessions/     the politeness domain: caps, back-off, shared slots, idle sessions
//   egress/       source addresses and proxies, and the reputation guard that rests them
//   smtp/         the wire: connection, session, replies and what they mean, providers
//   dns/          mail hosts, the resolver's trust, DNSBL
//   net/ lists/   sockets and addresses (Happy Eyeballs, internal addresses); the domain lists
//
// A type-only import counts like any other, so that the parts stay free of cycles.
const ENGINE_PARTS = [
  { name: 'engine/batch', files: ['src/engine/batch/**'], dir: true },
  { name: 'engine/verifier.ts', files: ['src/engine/verifier.ts'], target: 'verifier\\.js$' },
  { name: 'engine/probe.ts', files: ['src/engine/probe.ts'], target: 'probe\\.js$' },
  { name: 'engine/sessions', files: ['src/engine/sessions/**'], dir: true },
  { name: 'engine/egress', files: ['src/engine/egress/**'], dir: true },
  { name: 'engine/smtp', files: ['src/engine/smtp/**'], dir: true },
  { name: 'engine/dns', files: ['src/engine/dns/**'], dir: true },
  { name: 'engine/net', files: ['src/engine/net/**'], dir: true },
  { name: 'engine/lists', files: ['src/engine/lists/**'], dir: true },
];
const ENGINE_LEAVES = [
  'src/engine/types.ts',
  'src/engine/outcome.ts',
  'src/engine/verdict.ts',
  'src/engine/syntax.ts',
  'src/engine/coordination.ts',
  'src/engine/coordination-local.ts',
  'src/engine/ttl-map.ts',
  'src/engine/background.ts',
];
const EDGES = ['api', 'dashboard', 'jobs', 'cli', 'mcp'];
const others = (self) => EDGES.filter((e) => e !== self);

const ENGINE_OUTSIDE = ['store', 'services', 'redis', 'http', ...EDGES, 'runtime'];
/** The module specifiers from a file at `level` ('root' or 'folder' of src/engine) into `part`. */
function engineTarget(part, level) {
  const from = level === 'root' ? '^\\./' : '^\\.\\./';
  return part.dir ? `${from}${part.name.slice('engine/'.length)}/` : `${from}${part.target}`;
}
/** `files` (at `level`) must import none of `above`: the engine's parts point one way. */
function engineLayer(name, files, level, above) {
  return layer(name, files, ENGINE_OUTSIDE, {
    more: above.map((part) => ({
      regex: engineTarget(part, level),
      caseSensitive: true,
      message: `${name} must not import ${part.name}: the engine's parts point one way and it sits above (docs/architecture.md, "Inside the engine").`,
    })),
  });
}
const engineLayers = [
  ...ENGINE_PARTS.map((part, i) =>
    engineLayer(part.name, part.files, part.dir ? 'folder' : 'root', ENGINE_PARTS.slice(0, i)),
  ),
  engineLayer('engine/leaves', ENGINE_LEAVES, 'root', ENGINE_PARTS),
];

const layers = [
  layer('engine', ['src/engine/**'], ENGINE_OUTSIDE),
  ...engineLayers,
  layer('store', ['src/store/**'], ['services', 'redis', 'http', ...EDGES, 'runtime']),
  layer('services', ['src/services/**'], ['redis', 'http', ...EDGES, 'runtime']),
  layer('redis', ['src/redis/**'], ['store', 'http', ...EDGES, 'runtime']),
  layer('http', ['src/http/**'], ['store', 'redis', ...EDGES, 'runtime'], { typesFrom: ['store'] }),
  layer('api', ['src/api/**'], ['store', 'redis', ...others('api'), 'runtime'], { typesFrom: ['store'] }),
  layer('dashboard', ['src/dashboard/**'], ['store', 'redis', ...others('dashboard'), 'runtime'], {
    typesFrom: ['store'],
  }),
  // The MCP server is an API client: it reaches accounts, quota and verification only through the
  // HTTP API (so that a key's scopes and limits hold), never through services, the store or the engine.
  layer('mcp', ['src/mcp/**'], ['engine', 'store', 'services', 'redis', 'http', ...others('mcp'), 'runtime']),
  layer('jobs', ['src/jobs/**'], ['store', 'redis', 'http', ...others('jobs'), 'runtime'], {
    typesFrom: ['store'],
  }),
  // The command line is the process's entry: it may start the other edges (runtime.ts, jobs/) and
  // open, migrate or copy a store, but it reads and writes one only through services.
  layer('cli', ['src/cli/**'], ['storeExceptOpening', 'http', 'dashboard', 'redis'], {
    typesFrom: ['storeExceptOpening'],
  }),
  layer(
    'leaves',
    ['src/config.ts', 'src/errors.ts', 'src/clock.ts', 'src/context.ts'],
    ['store', 'services', 'redis', 'http', ...EDGES, 'runtime'],
    { typesFrom: ['store', 'services'] },
  ),
  layer('runtime.ts', ['src/runtime.ts'], ['cli']),
  {
    name: 'layers/web',
    files: ['web/src/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+src/(dashboard/contract|engine/types)\\.js$',
              caseSensitive: true,
              allowTypeImports: true,
              message:
                'web/ takes the contract and the engine result types with `import type` (nothing of the server reaches the bundle).',
            },
            {
              regex: '^(\\.\\./)+src/(?!(dashboard/contract|engine/types)\\.js$)',
              caseSensitive: true,
              message:
                'web/ imports nothing of the server but the contract (src/dashboard/contract.ts) and the engine result types.',
            },
          ],
        },
      ],
    },
  },
];

export default tseslint.config(
  { ignores: ['dist/', 'clients/*/dist/', 'node_modules/', 'data/', 'coverage/', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  ...layers,
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
);
