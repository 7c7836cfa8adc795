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

/** `files` must not import the `forbidden` layers; `typesFrom` may still be named with `import type`. */
function layer(name, files, forbidden, { typesFrom = [], ignores = [] } = {}) {
  return {
    name: `layers/${name}`,
    files,
    ignores,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: forbidden.map((target) => ({
            regex: LAYER[target],
            caseSensitive: true,
            allowTypeImports: typesFrom.includes(target),
            message: `${name} must not import ${target.replace('ExceptOpening', '')}/: ${WHY[target]} (docs/architecture.md).`,
          })),
        },
      ],
    },
  };
}

const EDGES = ['api', 'dashboard', 'jobs', 'cli', 'mcp'];
const others = (self) => EDGES.filter((e) => e !== self);

const layers = [
  layer('engine', ['src/engine/**'], ['store', 'services', 'redis', 'http', ...EDGES, 'runtime']),
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
