// deploy/ rendered with the small kustomize subset it uses, for the deploy specs (test/unit/deploy-*.spec.ts).
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import * as ts from 'typescript';
import { parse, parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Service, ServiceAccount } from 'kubernetes-models/v1';

export const ROOT = path.resolve(__dirname, '..', '..');
export const DEPLOY = path.join(ROOT, 'deploy');

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: any;
};

/** The Kubernetes schema of each kind deploy/ may render, by `apiVersion/kind`. */
export const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'batch/v1/Job': Job,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
};

/** The typed model of each kind: kubernetes-models' interfaces, generated from the Kubernetes OpenAPI schemas. */
const MODEL_TYPES: Record<string, string> = {
  'apps/v1/Deployment': 'apps/v1/Deployment").IDeployment',
  'autoscaling/v2/HorizontalPodAutoscaler': 'autoscaling/v2/HorizontalPodAutoscaler").IHorizontalPodAutoscaler',
  'batch/v1/Job': 'batch/v1/Job").IJob',
  'networking.k8s.io/v1/Ingress': 'networking.k8s.io/v1/Ingress").IIngress',
  'networking.k8s.io/v1/NetworkPolicy': 'networking.k8s.io/v1/NetworkPolicy").INetworkPolicy',
  'policy/v1/PodDisruptionBudget': 'policy/v1/PodDisruptionBudget").IPodDisruptionBudget',
  'v1/ConfigMap': 'v1/ConfigMap").IConfigMap',
  'v1/Service': 'v1/Service").IService',
  'v1/ServiceAccount': 'v1/ServiceAccount").IServiceAccount',
};

/**
 * Fields the Kubernetes schema does not know, at any depth. kubernetes-models' validate() checks
 * types, formats and required fields but lets additional properties through (a misspelt
 * `readinessProbes` passes it); its TypeScript interfaces list every field of each schema, so
 * each object is type-checked as an object literal of its kind, where TypeScript refuses every
 * property its type does not declare. One line per problem: `Kind/name: message`.
 */
export function unknownFields(objects: K8sObject[]): string[] {
  const file = path.join(ROOT, 'test', 'support', 'deploy-objects.generated.ts');
  const source = objects
    .map((obj, i) => {
      const type = MODEL_TYPES[`${obj.apiVersion}/${obj.kind}`];
      if (!type) throw new Error(`no Kubernetes model for ${obj.apiVersion}/${obj.kind}`);
      return `export const o${i}: import("kubernetes-models/${type} = ${JSON.stringify(obj)};`;
    })
    .join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
  };
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (name) => name === file || fileExists.call(host, name);
  host.readFile = (name) => (name === file ? source : readFile.call(host, name));
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, source, language) : getSourceFile.call(host, name, language, ...rest);
  const program = ts.createProgram([file], options, host);
  const sourceFile = program.getSourceFile(file)!;
  return ts.getPreEmitDiagnostics(program, sourceFile).map((diagnostic) => {
    const line = diagnostic.start === undefined ? -1 : sourceFile.getLineAndCharacterOfPosition(diagnostic.start).line;
    const obj = objects[line];
    return `${obj ? `${obj.kind}/${obj.metadata.name}` : file}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
  });
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Strategic merge, as kustomize does for the fields we patch: maps deep, lists of named items by name. */
function merge(target: any, patch: any): any {
  if (isObject(target) && isObject(patch)) {
    const out: Record<string, any> = { ...target };
    for (const [key, value] of Object.entries(patch)) out[key] = key in target ? merge(target[key], value) : value;
    return out;
  }
  if (Array.isArray(target) && Array.isArray(patch) && patch.every((p) => isObject(p) && typeof p.name === 'string')) {
    const out = target.map((item) => {
      const p = patch.find((candidate) => isObject(item) && candidate.name === item.name);
      return p ? merge(item, p) : item;
    });
    for (const p of patch) if (!target.some((item) => isObject(item) && item.name === p.name)) out.push(p);
    return out;
  }
  return patch;
}

export function readDocs(file: string): K8sObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0].message}`);
      return doc.toJSON() as K8sObject;
    })
    .filter(Boolean);
}

export function readKustomization(dir: string): Record<string, any> {
  return parse(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')) as Record<string, any>;
}

const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding']);

function podSpecs(obj: K8sObject): any[] {
  if (obj.kind === 'Deployment' || obj.kind === 'Job') return [obj.spec.template.spec];
  return [];
}

/**
 * One kustomization. A Kustomization starts empty; a Component (`inherited` given) works on what
 * its parent accumulated before it, so its patches, images and namespace reach the parent's objects.
 */
function render(dir: string, k: Record<string, any>, inherited?: K8sObject[]): K8sObject[] {
  const known = new Set(['apiVersion', 'kind', 'resources', 'components', 'namespace', 'images', 'patches']);
  for (const key of Object.keys(k)) if (!known.has(key)) throw new Error(`${dir}: kustomization field ${key} is not supported by this renderer`);
  const expected = inherited ? 'Component' : 'Kustomization';
  if (k.kind !== expected) throw new Error(`${dir}: a ${k.kind} where a ${expected} belongs`);
  let objects: K8sObject[] = [...(inherited ?? [])];
  for (const resource of (k.resources ?? []) as string[]) {
    const full = path.join(dir, resource);
    objects.push(...(statSync(full).isDirectory() ? render(full, readKustomization(full)) : readDocs(full)));
  }
  // In order, each on everything accumulated so far (kustomize's order: resources, then components).
  for (const component of (k.components ?? []) as string[]) {
    const full = path.join(dir, component);
    objects = render(full, readKustomization(full), objects);
  }
  for (const { path: patchPath } of (k.patches ?? []) as Array<{ path: string }>) {
    for (const patch of readDocs(path.join(dir, patchPath))) {
      const index = objects.findIndex((o) => o.kind === patch.kind && o.metadata.name === patch.metadata.name);
      if (index < 0) throw new Error(`${dir}: patch ${patchPath} matches no ${patch.kind}/${patch.metadata.name}`);
      objects[index] = merge(objects[index], patch);
    }
  }
  for (const image of (k.images ?? []) as Array<{ name: string; newName?: string; newTag?: string; digest?: string }>) {
    for (const obj of objects) {
      for (const spec of podSpecs(obj)) {
        for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
          if (container.image !== image.name && !container.image.startsWith(`${image.name}:`)) continue;
          container.image = `${image.newName ?? image.name}${image.digest ? `@${image.digest}` : image.newTag ? `:${image.newTag}` : ''}`;
        }
      }
    }
  }
  if (k.namespace) objects = objects.map((o) => (CLUSTER_SCOPED.has(o.kind) ? o : { ...o, metadata: { ...o.metadata, namespace: k.namespace } }));
  return objects;
}

/**
 * The kustomize subset deploy/ uses: resources (files, directories), components, namespace, images,
 * patches. `kustomization` stands in for the directory's own file (an overlay with one more component).
 */
export function build(dir: string, kustomization: Record<string, any> = readKustomization(dir)): K8sObject[] {
  return render(dir, kustomization);
}

export function find(objects: K8sObject[], kind: string, name?: string): K8sObject {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  expect(found).toHaveLength(1);
  return found[0];
}

export function envOf(container: any): Record<string, any> {
  return Object.fromEntries((container.env ?? []).map((e: any) => [e.name, e]));
}
