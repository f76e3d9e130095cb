// The deploy files against the inbox example and against each other (issue 38, point 6): the
// image builds the package from this repository and runs the example as a non-root user on all
// interfaces; the compose file and the Kubernetes manifest use the image's port, the example's
// probe paths and variables, keep the secret out of the file, and give the shutdown (preStop, the
// drain, the requests in flight, the worker, closing) the time it needs before SIGKILL.
// test/deploy/image.test.ts runs the image's command and probes it.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../examples/helpers.js';
import {
  compose,
  composeSeconds,
  container,
  dockerfile,
  EXAMPLE_ENV,
  image,
  kubernetes,
  portNumber,
  preStopSeconds,
  read,
  shutdownSeconds,
} from './deploy-files.js';

const EXAMPLE = 'examples/express-inbox.mjs';
const imagePort = () => Number(image().env['PORT']);
const imageDrainMs = () => Number(image().env['SHUTDOWN_DRAIN_MS'] ?? 5000);

describe('deploy/Dockerfile', () => {
  it('builds the package from this repository with npm ci and npm run build', () => {
    const build = dockerfile().slice(0, -1);
    const runs = build.flatMap((stage) => stage.run).join(' && ');
    expect(runs).toMatch(/\bnpm ci\b/);
    expect(runs).toMatch(/\bnpm run build\b/);
    expect(build.flatMap((stage) => stage.copy)).toEqual(expect.arrayContaining(['package.json package-lock.json ./', '. .']));
  });

  it('runs node examples/express-inbox.mjs in exec form, as a non-root user, on 0.0.0.0 and the port it exposes', () => {
    const final = image();
    expect(final.cmd).toEqual(['node', EXAMPLE]); // exec form: node is PID 1 and gets SIGTERM itself
    expect(existsSync(`${ROOT}${EXAMPLE}`)).toBe(true);
    expect(final.user).toBeDefined();
    expect(['root', '0', '0:0', 'root:root']).not.toContain(final.user);
    expect(final.env['HOST']).toBe('0.0.0.0');
    expect(Number.isInteger(imagePort())).toBe(true);
    expect(final.expose).toEqual([imagePort()]);
    expect(Number.isInteger(imageDrainMs())).toBe(true);
    for (const name of Object.keys(final.env)) expect(EXAMPLE_ENV, `ENV ${name}`).toContain(name);
  });

  it('installs every package the example imports, at the versions this repository tests', () => {
    const app = JSON.parse(read('deploy/app-package.json')) as { dependencies: Record<string, string> };
    const own = JSON.parse(read('package.json')) as { devDependencies: Record<string, string> };
    const source = read(EXAMPLE);
    const imported = new Set<string>();
    for (const [, specifier] of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)['"]([^'".][^'"]*)['"]/g)) {
      if (specifier!.startsWith('node:')) continue;
      const parts = specifier!.split('/');
      imported.add(specifier!.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!);
    }
    // PGlite is the example's database when DATABASE_URL is not set (it reaches it through openPGlite).
    imported.add('@electric-sql/pglite');
    expect([...imported].sort()).toEqual(Object.keys(app.dependencies).sort());
    expect(app.dependencies['rack-webhooks']).toBe('file:rack-webhooks.tgz'); // the package packed by the build stage
    for (const name of imported) if (name !== 'rack-webhooks') expect(app.dependencies[name], name).toBe(own.devDependencies[name]);
  });

  it('.dockerignore keeps the local node_modules and dist out of the build', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git', 'inbox-data']));
  });
});

describe('deploy/compose.yaml', () => {
  it('builds the image, publishes its port, and waits for a healthy PostgreSQL it reaches by service name', () => {
    const { services } = compose();
    const inbox = services.inbox;
    expect(inbox.build).toEqual({ context: '..', dockerfile: 'deploy/Dockerfile' });
    expect(inbox.ports).toEqual([`${imagePort()}:${imagePort()}`]);
    expect(inbox.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(services.postgres.healthcheck.test).toEqual(expect.arrayContaining(['pg_isready']));
    const url = new URL(inbox.environment.DATABASE_URL);
    const pg = services.postgres.environment;
    expect([url.hostname, url.port, url.username, url.password, url.pathname]).toEqual([
      'postgres',
      '5432',
      pg.POSTGRES_USER,
      pg.POSTGRES_PASSWORD,
      `/${pg.POSTGRES_DB}`,
    ]);
  });

  it('takes the secret from the environment, sets only the example variables, and probes /readyz on the port', () => {
    const inbox = compose().services.inbox;
    expect(inbox.environment.RACK_WEBHOOK_SECRETS).toMatch(/^\$\{RACK_WEBHOOK_SECRETS:\?.+\}$/); // required, never written here
    for (const name of Object.keys(inbox.environment)) expect(EXAMPLE_ENV, name).toContain(name);
    // node, not curl: the slim image has no curl.
    expect(inbox.healthcheck.test.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
    expect(inbox.healthcheck.test[3]).toContain(`'http://127.0.0.1:${imagePort()}/readyz'`);
  });

  it('gives the shutdown (drain, requests, worker, closing) its time before SIGKILL', () => {
    const inbox = compose().services.inbox;
    const drainMs = Number(inbox.environment.SHUTDOWN_DRAIN_MS ?? imageDrainMs());
    const budget = shutdownSeconds(drainMs);
    expect(composeSeconds(inbox.stop_grace_period), JSON.stringify(budget)).toBeGreaterThan(budget.total);
  });
});

describe('deploy/kubernetes.yaml', () => {
  it('exposes the image port and probes the example paths: /readyz for readiness, /healthz for liveness and start-up', () => {
    const manifest = kubernetes();
    const main = container(manifest);
    expect(main.ports.map((port: { containerPort: number }) => port.containerPort)).toEqual([imagePort()]);
    expect(main.readinessProbe.httpGet.path).toBe('/readyz');
    expect(main.livenessProbe.httpGet.path).toBe('/healthz');
    expect(main.startupProbe.httpGet.path).toBe('/healthz');
    for (const probe of [main.readinessProbe, main.livenessProbe, main.startupProbe])
      expect(portNumber(probe.httpGet.port, manifest)).toBe(imagePort());
    // The Service sends deliveries to that port of these pods; the disruption budget counts the same pods.
    const labels = manifest['Deployment'].spec.template.metadata.labels;
    expect(portNumber(manifest['Service'].spec.ports[0].targetPort, manifest)).toBe(imagePort());
    expect(labels).toMatchObject(manifest['Service'].spec.selector);
    expect(labels).toMatchObject(manifest['Deployment'].spec.selector.matchLabels);
    expect(labels).toMatchObject(manifest['PodDisruptionBudget'].spec.selector.matchLabels);
  });

  it('runs at least two replicas on PostgreSQL, never fewer than the replicas during a rollout', () => {
    const manifest = kubernetes();
    const { spec } = manifest['Deployment'];
    expect(spec.replicas).toBeGreaterThanOrEqual(2);
    expect(spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
    expect(manifest['PodDisruptionBudget'].spec.minAvailable).toBeGreaterThanOrEqual(1);
    const env = container(manifest).env as { name: string }[];
    expect(env.map((variable) => variable.name)).toContain('DATABASE_URL'); // several replicas: not PGlite
  });

  it('takes the secrets from a Secret, sets only the example variables, and keeps the image user non-root', () => {
    const manifest = kubernetes();
    const env = container(manifest).env as { name: string; value?: string; valueFrom?: { secretKeyRef?: unknown } }[];
    for (const variable of env) expect(EXAMPLE_ENV, variable.name).toContain(variable.name);
    for (const name of ['RACK_WEBHOOK_SECRETS', 'DATABASE_URL']) {
      const variable = env.find((entry) => entry.name === name)!;
      expect(variable.value, name).toBeUndefined();
      expect(variable.valueFrom?.secretKeyRef, name).toBeDefined();
    }
    expect(env.find((entry) => entry.name === 'HOST')).toBeUndefined(); // the image's 0.0.0.0
    const security = manifest['Deployment'].spec.template.spec.securityContext;
    expect(security.runAsNonRoot).toBe(true);
    expect(security.runAsUser).not.toBe(0);
  });

  it('gives preStop and the shutdown (drain, requests, worker, closing) their time within the grace period', () => {
    const manifest = kubernetes();
    const env = container(manifest).env as { name: string; value?: string }[];
    const drainMs = Number(env.find((entry) => entry.name === 'SHUTDOWN_DRAIN_MS')?.value ?? imageDrainMs());
    const preStop = preStopSeconds(manifest);
    expect(preStop).toBeGreaterThan(0);
    const budget = shutdownSeconds(drainMs);
    const grace = manifest['Deployment'].spec.template.spec.terminationGracePeriodSeconds;
    // The grace period runs from the start of preStop: the sleep, then SIGTERM and the whole shutdown.
    expect(grace, JSON.stringify({ preStop, ...budget })).toBeGreaterThan(preStop + budget.total);
  });
});
