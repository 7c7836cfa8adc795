/**
 * The deployment files users copy (docs/deploy.md) are valid for the tools that read them, since
 * no cluster or Docker Compose can run here: the Kubernetes example against the Kubernetes API's
 * schemas (kubernetes-models, generated from the API's OpenAPI document), compose.yaml against
 * the Compose Specification's JSON schema (compose-spec.json beside this file: schema/compose-spec.json
 * of github.com/compose-spec/compose-spec at 170098ba07d9f53c383a41bfd4c5166b0a4529a6, 2026-06-23,
 * Apache-2.0; npm's copies are years old and lack keys Compose reads today, such as the top-level
 * `name`). Each validator is shown to
 * refuse a broken copy, and the files are checked for what docs/deploy.md says they do.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import ts from 'typescript';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const K8S_DIR = `${root}deploy/kubernetes/`;

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown>;
  [key: string]: unknown;
}

interface Container {
  name: string;
  image: string;
  args?: string[];
  livenessProbe?: { httpGet?: { path: string } };
  readinessProbe?: { httpGet?: { path: string } };
  startupProbe?: { httpGet?: { path: string } };
  env?: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
}

interface PodSpec {
  containers: Container[];
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
}

function manifests(): { file: string; doc: Manifest }[] {
  return readdirSync(K8S_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(K8S_DIR + file, 'utf8')).map((d) => ({
        file,
        doc: d.toJS() as Manifest,
      })),
    );
}

/** The API groups the example uses, each with its kubernetes-models module. */
const API_GROUPS: Record<string, () => Promise<Record<string, unknown>>> = {
  v1: () => import('kubernetes-models/v1'),
  'apps/v1': () => import('kubernetes-models/apps/v1'),
  'batch/v1': () => import('kubernetes-models/batch/v1'),
};

/** The kubernetes-models class for a manifest's apiVersion and kind. */
async function modelOf(doc: Manifest): Promise<new (data: unknown) => { validate(): void }> {
  const group = API_GROUPS[doc.apiVersion];
  if (!group) throw new Error(`no models loaded for apiVersion ${doc.apiVersion}`);
  const model = (await group())[doc.kind];
  if (typeof model !== 'function') throw new Error(`no model for ${doc.apiVersion} ${doc.kind}`);
  return model as new (data: unknown) => { validate(): void };
}

async function k8sErrors(doc: Manifest): Promise<string | null> {
  const Model = await modelOf(doc);
  try {
    new Model(doc).validate();
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * Fields the Kubernetes API does not know (a misspelt `readinesProbe`, which the API server
 * drops or refuses): the schemas above allow unknown fields, as kubeconform does without
 * `-strict`, so each object is also type-checked as an object literal of kubernetes-models'
 * TypeScript interface for its kind, whose excess-property check names every unknown field.
 */
function unknownFields(docs: Manifest[]): string[] {
  const file = `${K8S_DIR}strict-check.ts`;
  const source = docs
    .map((doc, i) => {
      const module = doc.apiVersion === 'v1' ? 'kubernetes-models/v1' : `kubernetes-models/${doc.apiVersion}`;
      return `import type { I${doc.kind} as T${i} } from '${module}';\nexport const m${i}: T${i} = ${JSON.stringify(doc)};`;
    })
    .join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, ...rest);
  host.fileExists = (name) => name === file || fileExists(name);
  host.readFile = (name) => (name === file ? source : readFile(name));
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' '));
}

function podSpec(doc: Manifest): PodSpec {
  return (doc.spec as { template: { spec: PodSpec } }).template.spec;
}

function byKind(kind: string, name: string): Manifest {
  const found = manifests().find((m) => m.doc.kind === kind && m.doc.metadata.name === name);
  if (!found) throw new Error(`deploy/kubernetes has no ${kind} ${name}`);
  return found.doc;
}

describe('the Kubernetes example (deploy/kubernetes)', () => {
  it('validates against the Kubernetes schemas, every object of every file', async () => {
    const all = manifests();
    expect(all.map((m) => `${m.doc.kind}/${m.doc.metadata.name}`).sort()).toEqual([
      'ConfigMap/mailverdict',
      'Deployment/mailverdict-api',
      'Deployment/mailverdict-worker',
      'Job/mailverdict-migrate',
      'Secret/mailverdict',
      'Service/mailverdict-api',
    ]);
    for (const { file, doc } of all)
      expect({ file, errors: await k8sErrors(doc) }).toEqual({ file, errors: null });
  });

  it('has a validator that refuses a wrong type and a missing required field', async () => {
    const api = byKind('Deployment', 'mailverdict-api');
    expect(await k8sErrors({ ...api, spec: { ...api.spec, replicas: 'two' } })).toMatch(
      /replicas must be integer/,
    );
    const { selector: _selector, ...withoutSelector } = api.spec!;
    expect(await k8sErrors({ ...api, spec: withoutSelector })).toMatch(/required property selector/);
  });

  it('has no field the Kubernetes API does not know, and a check that finds a misspelt one', () => {
    const docs = manifests().map((m) => m.doc);
    expect(unknownFields(docs)).toEqual([]);
    const api = byKind('Deployment', 'mailverdict-api');
    const [container] = podSpec(api).containers;
    const { readinessProbe, ...rest } = container!;
    const misspelt = structuredClone(api);
    podSpec(misspelt).containers = [{ ...rest, readinesProbe: readinessProbe } as Container];
    expect(unknownFields([misspelt])).toEqual([
      expect.stringMatching(/readinesProbe.* does not exist in type 'IContainer'/),
    ]);
  }, 120_000);

  it('probes the API on /healthz (liveness, start-up) and /readyz (readiness)', () => {
    const [api] = podSpec(byKind('Deployment', 'mailverdict-api')).containers;
    expect(api!.args).toEqual(['serve', '--no-embedded-workers']);
    expect(api!.livenessProbe?.httpGet?.path).toBe('/healthz');
    expect(api!.startupProbe?.httpGet?.path).toBe('/healthz');
    expect(api!.readinessProbe?.httpGet?.path).toBe('/readyz');
  });

  it('runs workers and the migration Job from the same image, settings and Secret', () => {
    const [api] = podSpec(byKind('Deployment', 'mailverdict-api')).containers;
    const [worker] = podSpec(byKind('Deployment', 'mailverdict-worker')).containers;
    const [migrate] = podSpec(byKind('Job', 'mailverdict-migrate')).containers;
    expect(worker!.args).toEqual(['worker']);
    expect(migrate!.args).toEqual(['migrate']);
    expect(new Set([api!.image, worker!.image, migrate!.image]).size).toBe(1);
    const secretKeys = new Set(Object.keys(byKind('Secret', 'mailverdict').stringData as object));
    for (const c of [api!, worker!, migrate!])
      for (const e of c.env ?? [])
        if (e.valueFrom?.secretKeyRef) expect(secretKeys).toContain(e.valueFrom.secretKeyRef.key);
    const sealed = (c: Container) => c.env?.some((e) => e.name === 'MAILVERDICT_SECRET_KEY');
    expect([sealed(api!), sealed(worker!)]).toEqual([true, true]);
  });

  it('gives serve and worker a writable /tmp on their read-only root (large submissions spool there)', () => {
    for (const doc of [byKind('Deployment', 'mailverdict-api'), byKind('Deployment', 'mailverdict-worker')]) {
      const spec = podSpec(doc) as PodSpec & { volumes: { name: string; emptyDir?: object }[] };
      const [container] = spec.containers as (Container & {
        securityContext: { readOnlyRootFilesystem?: boolean };
        volumeMounts: { name: string; mountPath: string }[];
      })[];
      expect(container!.securityContext.readOnlyRootFilesystem).toBe(true);
      const tmp = container!.volumeMounts.find((m) => m.mountPath === '/tmp');
      expect(spec.volumes.find((v) => v.name === tmp?.name)?.emptyDir).toEqual({});
    }
  });

  it('runs every pod as the image’s non-root user, with a stop grace longer than serve’s 10 s', () => {
    for (const doc of [byKind('Deployment', 'mailverdict-api'), byKind('Deployment', 'mailverdict-worker')]) {
      const spec = podSpec(doc);
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
      expect(spec.terminationGracePeriodSeconds).toBeGreaterThan(10);
    }
    expect(podSpec(byKind('Job', 'mailverdict-migrate')).securityContext).toMatchObject({
      runAsNonRoot: true,
    });
  });
});

/** The Compose Specification's schema (JSON Schema draft-07) compiled by Ajv. */
function composeValidator() {
  const file = readFileSync(`${root}test/deploy/compose-spec.json`, 'utf8');
  // It names draft-07 by its https address, which Ajv's own draft-07 does not answer to.
  const { $schema: _draft, ...schema } = JSON.parse(file) as { $schema: string };
  return new Ajv({ allErrors: true, strict: false }).compile(schema);
}

interface ComposeService {
  command?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; disable?: boolean };
  secrets?: string[];
  environment?: Record<string, string>;
  stop_grace_period?: string;
}

function composeFile(): { services: Record<string, ComposeService>; secrets: object; volumes: object } {
  // Compose resolves YAML merge keys (`<<: *mailverdict`) before it reads the file.
  return parse(readFileSync(`${root}compose.yaml`, 'utf8'), { merge: true }) as ReturnType<
    typeof composeFile
  >;
}

describe('compose.yaml', () => {
  it('validates against the Compose Specification', () => {
    const validate = composeValidator();
    expect(validate(composeFile()) ? null : validate.errors).toBeNull();
  });

  it('has a validator that refuses a misspelt key and a wrong depends_on condition', () => {
    const validate = composeValidator();
    const file = composeFile();
    expect(
      validate({ ...file, services: { ...file.services, api: { ...file.services.api, comand: 'serve' } } }),
    ).toBe(false);
    const worker = { ...file.services.worker, depends_on: { migrate: { condition: 'service_finished' } } };
    expect(validate({ ...file, services: { ...file.services, worker } })).toBe(false);
  });

  it('migrates once, then starts the API and the workers on PostgreSQL and Redis with the shared key', () => {
    const { services, secrets, volumes } = composeFile();
    expect(Object.keys(services).sort()).toEqual(['api', 'migrate', 'postgres', 'redis', 'worker']);
    expect(services.migrate!.command).toEqual(['migrate']);
    expect(services.api!.command).toEqual(['serve', '--no-embedded-workers']);
    expect(services.worker!.command).toEqual(['worker']);
    expect(services.migrate!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    for (const name of ['api', 'worker']) {
      expect(services[name]!.depends_on).toEqual({
        migrate: { condition: 'service_completed_successfully' },
        redis: { condition: 'service_healthy' },
      });
      expect(services[name]!.secrets).toEqual(['mailverdict_secret_key']);
      expect(services[name]!.environment).toMatchObject({
        MAILVERDICT_SECRET_KEY_FILE: '/run/secrets/mailverdict_secret_key',
        MAILVERDICT_REDIS_URL: 'redis://redis:6379',
      });
      expect(services[name]!.stop_grace_period).toBe('30s');
    }
    expect(services.api!.healthcheck?.test).toEqual(['CMD', 'node', '/app/dist/cli/healthcheck.js']);
    expect(services.worker!.healthcheck).toEqual({ disable: true });
    expect(Object.keys(secrets)).toEqual(['mailverdict_secret_key']);
    expect(Object.keys(volumes)).toEqual(['postgres-data']);
  });
});
