// The deployment examples (deploy/kubernetes.yaml, deploy/ugs.service) against the server itself:
// probe paths answered by the app, ports and variable names from `ugs serve`'s own definitions,
// shutdown timings that leave room for the drain, and the unit file as systemd reads it.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { inject } from '../support/http-client.js';
import { PACKAGED_NODE_OPTIONS, serveDefault, serveVariables } from '../support/serve-variables.js';
import { useTestApp } from '../support/test-app.js';
import { UGS_BIN } from '../support/ugs-command.js';

const run = promisify(execFile);
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const DRAIN_SECONDS = Number(serveDefault('UGS_DRAIN_TIMEOUT_MS')) / 1000;

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet: { path: string; port: string | number };
}
interface Container {
  ports: { name?: string; containerPort: number }[];
  env: EnvVar[];
  readinessProbe: Probe;
  livenessProbe: Probe;
  lifecycle: { preStop: { exec: { command: string[] } } };
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a Kubernetes object, checked field by field below
type K8sObject = { kind: string; metadata: { name: string }; spec: any };

const objects = parseAllDocuments(read('deploy/kubernetes.yaml')).map((document) => document.toJS() as K8sObject);
const byKind = (kind: string) => {
  const found = objects.filter((object) => object.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!;
};

describe('deploy/kubernetes.yaml', () => {
  const served = useTestApp();
  const deployment = byKind('Deployment');
  const pod = deployment.spec.template.spec as { containers: Container[]; terminationGracePeriodSeconds: number };
  const [container] = pod.containers;
  const env = new Map(container!.env.map((variable) => [variable.name, variable]));
  const portOf = (port: string | number) =>
    typeof port === 'number' ? port : container!.ports.find((named) => named.name === port)?.containerPort;

  it('sets only variables `ugs serve` reads, binds all interfaces, and listens where the pod says', () => {
    const known = serveVariables();
    expect(env.get('NODE_OPTIONS')?.value).toBe(PACKAGED_NODE_OPTIONS);
    expect([...env.keys()].filter((name) => !known.has(name) && name !== 'NODE_OPTIONS')).toEqual([]);
    expect(env.get('UGS_HOST')?.value).toBe('0.0.0.0');
    expect(container!.ports.map((port) => port.containerPort)).toEqual([Number(env.get('UGS_PORT')?.value)]);
  });

  it('reads the PostgreSQL URL and the encryption keys from a Secret, and sets the public URL every replica shares', () => {
    for (const name of ['UGS_DATABASE_URL', 'UGS_ENCRYPTION_KEY']) {
      expect(env.get(name)?.value, name).toBeUndefined();
      expect(env.get(name)?.valueFrom?.secretKeyRef?.name, name).toBe('ugs');
    }
    expect(env.get('UGS_PUBLIC_URL')?.value).toMatch(/^https:\/\//);
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
  });

  it("probes readiness on /readyz and liveness on /healthz, on the server's port, and the app answers both", async () => {
    expect(container!.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container!.livenessProbe.httpGet.path).toBe('/healthz');
    for (const probe of [container!.readinessProbe, container!.livenessProbe]) {
      expect(portOf(probe.httpGet.port)).toBe(Number(env.get('UGS_PORT')?.value));
      expect((await inject(served.t.app, { method: 'GET', path: probe.httpGet.path })).status, probe.httpGet.path).toBe(
        200,
      );
    }
  });

  it('rolls out without losing capacity: a preStop delay, room for the drain, and a disruption budget', () => {
    expect(deployment.spec.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 1, maxUnavailable: 0 },
    });
    const [sleep, seconds] = container!.lifecycle.preStop.exec.command;
    expect(sleep).toBe('sleep');
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(Number(seconds) + DRAIN_SECONDS);
    const budget = byKind('PodDisruptionBudget');
    expect(budget.spec.selector).toEqual(deployment.spec.selector);
    expect(budget.spec.maxUnavailable).toBeLessThan(deployment.spec.replicas);
    const service = byKind('Service');
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    expect(portOf(service.spec.ports[0].targetPort)).toBe(Number(env.get('UGS_PORT')?.value));
  });
});

describe('deploy/ugs.service', () => {
  const unit = read('deploy/ugs.service');
  const settings = (key: string) => [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((match) => match[1]!);

  it('runs `ugs serve` with variables it reads, stopped by SIGTERM with room for the drain', () => {
    const known = serveVariables();
    const names = settings('Environment').map((assignment) => assignment.split('=')[0]!);
    expect(settings('Environment')).toContain(`NODE_OPTIONS=${PACKAGED_NODE_OPTIONS}`);
    expect(names.filter((name) => !known.has(name) && name !== 'NODE_OPTIONS')).toEqual([]);
    expect(names).toContain('UGS_DATABASE_URL');
    expect(settings('ExecStart')).toEqual(['/usr/local/bin/ugs serve']);
    expect(settings('KillSignal')).toEqual(['SIGTERM']);
    expect(Number(settings('TimeoutStopSec')[0])).toBeGreaterThan(DRAIN_SECONDS);
  });

  it('passes systemd-analyze verify (with ExecStart pointing at this checkout)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ugs-unit-'));
    try {
      const path = join(dir, 'ugs.service');
      writeFileSync(path, unit.replace('/usr/local/bin/ugs serve', `${UGS_BIN} serve`));
      const { stderr } = await run('systemd-analyze', ['verify', path]);
      expect(stderr.split('\n').filter((line) => line.includes('ugs.service'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
