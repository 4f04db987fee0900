// deploy/components/job-runners: durable jobs and webhook deliveries in a Deployment of their own that
// no Service routes to, the API replicas with BACKGROUND_JOBS=disabled. Rendered with base and with the
// production overlay, each with the component added to its components as an operator adds it.
import path from 'node:path';
import { loadConfig } from '#platform';
import { DELIVERY_TIMEOUT_MS } from '#webhooks';
import { DEPLOY, MODELS, build, envOf, find, readKustomization, type K8sObject } from '../support/deploy-manifests.js';

const COMPONENT = path.join(DEPLOY, 'components/job-runners');

/** `variant` with the component appended to its kustomization's components. */
function withJobRunners(variant: string): K8sObject[] {
  const dir = path.join(DEPLOY, variant);
  const kustomization = readKustomization(dir);
  return build(dir, { ...kustomization, components: [...(kustomization.components ?? []), path.relative(dir, COMPONENT)] });
}

/** Whether a selector (matchLabels only, as deploy/ writes them) selects pods with these labels. */
function selects(selector: { matchLabels?: Record<string, string>; matchExpressions?: unknown }, labels: Record<string, string>): boolean {
  expect(selector.matchExpressions).toBeUndefined();
  return Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
}

const names = (objects: K8sObject[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();

describe.each([['base'], ['overlays/production']])('deploy/%s with the job-runners component', (variant) => {
  const without = build(path.join(DEPLOY, variant));
  const objects = withJobRunners(variant);
  const apiDeployment = find(objects, 'Deployment', 'entitlements-api');
  const jobsDeployment = find(objects, 'Deployment', 'entitlements-jobs');
  const apiPod = apiDeployment.spec.template.spec;
  const jobsPod = jobsDeployment.spec.template.spec;
  const apiLabels: Record<string, string> = apiDeployment.spec.template.metadata.labels;
  const jobsLabels: Record<string, string> = jobsDeployment.spec.template.metadata.labels;
  const api = apiPod.containers.find((c: any) => c.name === 'api');
  const [jobs] = jobsPod.containers;
  const configMap = find(objects, 'ConfigMap');

  it("renders the variant's objects plus the runners' Deployment and PodDisruptionBudget, each valid against the Kubernetes schema", () => {
    expect(names(objects)).toEqual(names([...without, jobsDeployment, find(objects, 'PodDisruptionBudget', 'entitlements-jobs')]));
    for (const obj of objects) {
      if (obj.kind === 'PrometheusRule') continue; // not a Kubernetes kind: deploy-manifests.spec.ts checks it
      const Model = MODELS[`${obj.apiVersion}/${obj.kind}`];
      expect(Model).toBeDefined();
      expect(() => new Model(obj).validate()).not.toThrow();
    }
    expect(jobsLabels).toEqual({ 'app.kubernetes.io/name': 'entitlements-api', 'app.kubernetes.io/component': 'jobs' });
    expect(jobsDeployment.metadata.labels).toEqual(jobsLabels);
    expect(jobsPod.containers).toHaveLength(1);
    if (variant === 'overlays/production') {
      // The overlay's namespace and pinned image reach the component's objects too.
      for (const obj of objects) expect(obj.metadata.namespace).toBe('entitlements');
      expect(jobs.image).toMatch(/^registry\.example\.com\/entitlements-api(:\d+\.\d+\.\d+|@sha256:[0-9a-f]{64})$/);
    }
  });

  it('BACKGROUND_JOBS: disabled on the API replicas, enabled on the runners; without the component the API replicas keep the jobs', () => {
    expect(envOf(api).BACKGROUND_JOBS).toEqual({ name: 'BACKGROUND_JOBS', value: 'disabled' });
    expect(envOf(jobs).BACKGROUND_JOBS).toEqual({ name: 'BACKGROUND_JOBS', value: 'enabled' });
    expect(configMap.data.BACKGROUND_JOBS).toBeUndefined();
    const env = {
      ...configMap.data,
      DATABASE_URL: 'postgres://u:p@db:5432/x',
      REDIS_URL: 'redis://cache:6379',
      WEBHOOK_SIGNING_KEY: 'Kq3vZ8xW1nL5tR9yB2mC6hJ0dF4gS7pA+uE/oI=N',
    };
    delete env.RAIL_SECRETS_FILE; // a file only inside the pod
    expect(loadConfig({ ...env, BACKGROUND_JOBS: envOf(api).BACKGROUND_JOBS.value }).backgroundJobs).toBe(false);
    expect(loadConfig({ ...env, BACKGROUND_JOBS: envOf(jobs).BACKGROUND_JOBS.value }).backgroundJobs).toBe(true);
    const plainApi = find(without, 'Deployment').spec.template.spec.containers.find((c: any) => c.name === 'api');
    expect(envOf(plainApi).BACKGROUND_JOBS).toBeUndefined();
    expect(loadConfig(env).backgroundJobs).toBe(true);
  });

  it("the runners take no traffic and are not autoscaled: the Service, the HPA and the API's budget target the API pods only", () => {
    const service = find(objects, 'Service');
    expect(selects({ matchLabels: service.spec.selector }, apiLabels)).toBe(true);
    expect(selects({ matchLabels: service.spec.selector }, jobsLabels)).toBe(false);
    expect(find(objects, 'HorizontalPodAutoscaler').spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'entitlements-api' });
    expect(jobsDeployment.spec.replicas).toBe(2);
    // Neither Deployment claims the other's pods.
    expect(selects(jobsDeployment.spec.selector, jobsLabels)).toBe(true);
    expect(selects(jobsDeployment.spec.selector, apiLabels)).toBe(false);
    expect(selects(apiDeployment.spec.selector, jobsLabels)).toBe(false);
    // One budget for each, one pod down at a time.
    const budgets = objects.filter((o) => o.kind === 'PodDisruptionBudget');
    expect(budgets.filter((b) => selects(b.spec.selector, apiLabels)).map((b) => b.metadata.name)).toEqual(['entitlements-api']);
    expect(budgets.filter((b) => selects(b.spec.selector, jobsLabels)).map((b) => b.metadata.name)).toEqual(['entitlements-jobs']);
    expect(find(objects, 'PodDisruptionBudget', 'entitlements-jobs').spec.maxUnavailable).toBe(1);
    // Spread over zones and nodes counting the runners only.
    expect(jobsPod.topologySpreadConstraints.length).toBeGreaterThan(0);
    for (const constraint of jobsPod.topologySpreadConstraints) expect(constraint.labelSelector.matchLabels).toEqual(jobsLabels);
  });

  it("runners prefer nodes without API pods (their CPU would move the public reads' tail), and never wait for one", () => {
    expect(jobsPod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution).toBeUndefined();
    const terms = jobsPod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution;
    expect(terms).toHaveLength(1);
    expect(terms[0].podAffinityTerm.topologyKey).toBe('kubernetes.io/hostname');
    expect(selects(terms[0].podAffinityTerm.labelSelector, apiLabels)).toBe(true);
    expect(selects(terms[0].podAffinityTerm.labelSelector, jobsLabels)).toBe(false);
    // The API pods keep no such preference: without the component they run the jobs themselves.
    expect(apiDeployment.spec.template.spec.affinity).toBeUndefined();
  });

  it('a NetworkPolicy covers the runners: DNS, PostgreSQL, Redis and HTTPS anywhere (stores, webhook receivers) out; metrics in from monitoring', () => {
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy' && selects(o.spec.podSelector, jobsLabels));
    expect(policies.length).toBeGreaterThan(0);
    for (const policy of policies) expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    const egress: any[] = policies.flatMap((p) => p.spec.egress ?? []);
    const rulesFor = (port: number, protocol: string) => egress.filter((r) => r.ports.some((p: any) => p.port === port && p.protocol === protocol));
    const kubeSystem = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } }];
    for (const protocol of ['UDP', 'TCP']) expect(rulesFor(53, protocol).map((r) => r.to)).toContainEqual(kubeSystem);
    for (const port of [5432, 6379]) expect(rulesFor(port, 'TCP').length).toBeGreaterThan(0);
    // Receivers and the stores' APIs have no fixed addresses: 443 to anywhere.
    expect(rulesFor(443, 'TCP').some((r) => r.to === undefined)).toBe(true);
    const ingress: any[] = policies.flatMap((p) => p.spec.ingress ?? []);
    const metrics = ingress.filter((r) => r.ports.some((p: any) => p.port === Number(configMap.data.METRICS_PORT)));
    expect(metrics.map((r) => r.from)).toEqual([[{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]]);
  });

  it("a runner pod is the API pod's twin: image, configuration, secrets, volumes, security, migrate init container, scrape annotations", () => {
    expect(jobs.image).toBe(api.image);
    expect(jobs.imagePullPolicy).toBe(api.imagePullPolicy);
    expect(jobs.envFrom).toEqual(api.envFrom);
    const secretEnv = (container: any) => Object.fromEntries(Object.entries(envOf(container)).filter(([name]) => name !== 'BACKGROUND_JOBS'));
    expect(secretEnv(jobs)).toEqual(secretEnv(api));
    expect(Object.keys(secretEnv(jobs)).sort()).toEqual(['DATABASE_URL', 'OPERATOR_TOKEN', 'REDIS_URL', 'WEBHOOK_SIGNING_KEY']);
    expect(jobs.volumeMounts).toEqual(api.volumeMounts);
    expect(jobsPod.volumes).toEqual(apiPod.volumes);
    expect(jobs.ports).toEqual(api.ports);
    expect(jobs.securityContext).toEqual(api.securityContext);
    for (const key of ['securityContext', 'serviceAccountName', 'automountServiceAccountToken'])
      expect({ key, value: jobsPod[key] }).toEqual({ key, value: apiPod[key] });
    expect(jobsPod.initContainers).toEqual(apiPod.initContainers);
    expect(jobsDeployment.spec.template.metadata.annotations).toEqual(apiDeployment.spec.template.metadata.annotations);
    expect(jobs.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
    expect(jobs.resources.limits).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
    // The MemoryGrowth alert reads one limit: production's API pods' limit.
    if (variant === 'overlays/production') expect(jobs.resources.limits.memory).toBe(api.resources.limits.memory);
  });

  it('probes as the API: startup and liveness on /v1/healthz, readiness on /v1/readyz', () => {
    expect(jobs.startupProbe.httpGet).toEqual({ path: '/v1/healthz', port: 'http' });
    expect(jobs.livenessProbe.httpGet).toEqual({ path: '/v1/healthz', port: 'http' });
    expect(jobs.readinessProbe.httpGet).toEqual({ path: '/v1/readyz', port: 'http' });
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) expect({ probe, value: jobs[probe] }).toEqual({ probe, value: api[probe] });
  });

  it('shutdown: no preStop (no endpoints to leave); the grace period covers the drain delay, in-flight requests and a delivery', () => {
    expect(jobs.lifecycle?.preStop).toBeUndefined();
    const drainSeconds = Number(configMap.data.SHUTDOWN_DELAY_MS) / 1000 + 10; // then up to 10 s for in-flight requests (main.ts)
    expect(jobsPod.terminationGracePeriodSeconds).toBeGreaterThan(drainSeconds + DELIVERY_TIMEOUT_MS / 1000);
    expect(jobsDeployment.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
  });
});

describe('deploy/overlays/production with the job-runners and service-monitor components', () => {
  const dir = path.join(DEPLOY, 'overlays/production');
  const kustomization = readKustomization(dir);
  const components = [...(kustomization.components ?? []), path.relative(dir, COMPONENT), path.relative(dir, path.join(DEPLOY, 'components/service-monitor'))];
  const objects = build(dir, { ...kustomization, components });
  const podOf = (name: string) => find(objects, 'Deployment', name).spec.template;

  it('the runners, which no Service selects, are scraped by a PodMonitor; the API pods by the ServiceMonitor', () => {
    const api = podOf('entitlements-api');
    const jobs = podOf('entitlements-jobs');
    const podMonitor = find(objects, 'PodMonitor');
    expect(podMonitor.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(selects(podMonitor.spec.selector, jobs.metadata.labels)).toBe(true);
    expect(selects(podMonitor.spec.selector, api.metadata.labels)).toBe(false);
    const [endpoint] = podMonitor.spec.podMetricsEndpoints;
    expect(endpoint).toEqual(expect.objectContaining({ port: 'metrics', path: '/metrics' }));
    const metricsPort = jobs.spec.containers[0].ports.find((p: any) => p.name === endpoint.port);
    expect(String(metricsPort.containerPort)).toBe(find(objects, 'ConfigMap').data.METRICS_PORT);

    const serviceMonitor = find(objects, 'ServiceMonitor');
    const service = find(objects, 'Service');
    expect(selects(serviceMonitor.spec.selector, service.metadata.labels ?? {})).toBe(true);
    expect(selects({ matchLabels: service.spec.selector }, api.metadata.labels)).toBe(true);
    expect(selects({ matchLabels: service.spec.selector }, jobs.metadata.labels)).toBe(false);
    // Both monitors scrape the same interval, so the job and API series line up.
    expect(endpoint.interval).toBe(serviceMonitor.spec.endpoints[0].interval);
  });

  it("an alert watches the runners' readiness as ReplicasNotReady watches the API", () => {
    const rules: any[] = find(objects, 'PrometheusRule').spec.groups.flatMap((g: any) => g.rules);
    const expr = (alert: string) => rules.find((r) => r.alert === alert)?.expr;
    expect(expr('JobRunnersNotReady')).toBe(expr('ReplicasNotReady').replaceAll('"entitlements-api"', '"entitlements-jobs"'));
  });
});

describe('the kustomize subset: components', () => {
  it("a Component renders only inside a Kustomization, on its parent's objects", () => {
    expect(() => build(COMPONENT)).toThrow(/a Component where a Kustomization belongs/);
    expect(() => build(path.join(DEPLOY, 'base'), { ...readKustomization(path.join(DEPLOY, 'base')), resources: ['../components/job-runners'] })).toThrow(
      /a Component where a Kustomization belongs/,
    );
    // Without the base before it, the component's patch has no API Deployment to patch.
    const empty = { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', components: ['../components/job-runners'] };
    expect(() => build(path.join(DEPLOY, 'base'), empty)).toThrow(/matches no Deployment\/entitlements-api/);
  });
});
