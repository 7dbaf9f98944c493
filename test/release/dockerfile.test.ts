// The Dockerfile, read without a Docker engine: the image is built from exactly the release
// (`npm ci && npm run release`, then that tarball installed with production dependencies only), on an
// official Node LTS base, slim at run time, non-root, with a /data volume, a health check on /readyz
// that needs nothing the slim image lacks, and `ugs serve` as PID 1 on all interfaces.
// test/release/release.test.ts runs the installed release the way this file's runtime stage does.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dockerfileInstructions, dockerStages, envPairs, execForm } from '../support/dockerfile.js';
import { PACKAGED_NODE_OPTIONS, serveDefault, serveVariables } from '../support/serve-variables.js';

const instructions = dockerfileInstructions();
const stages = dockerStages(instructions);
const runtime = stages.length - 1;
const inStage = (stage: number, keyword: string) =>
  instructions.filter((instruction) => instruction.stage === stage && instruction.keyword === keyword);
const runtimeEnv = new Map(inStage(runtime, 'ENV').flatMap(({ args }) => envPairs(args)));
const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  engines: { node: string };
};

/** The RUN lines, stage by stage: these and no others. */
const EXPECTED_RUNS = {
  build: ['npm ci && npm run release'],
  install: [
    'sha256sum -c ugs-*.tgz.sha256 && npm install --prefix /opt/ugs --omit=dev --offline --no-audit --no-fund ./ugs-*.tgz',
  ],
  runtime: ['mkdir /data && chown node:node /data'],
};

describe('the Dockerfile', () => {
  it('builds on an official Node LTS image the package supports, and runs on its slim variant', () => {
    const nodeVersion = instructions.find(
      ({ keyword, stage, args }) => keyword === 'ARG' && stage === -1 && args.startsWith('NODE_VERSION='),
    );
    const major = Number(nodeVersion?.args.split('=')[1]);
    // Even majors become LTS; the package's engines must allow it.
    expect(major % 2).toBe(0);
    expect(major).toBeGreaterThanOrEqual(Number(/>=\s*(\d+)/.exec(manifest.engines.node)?.[1]));
    expect(stages).toEqual([
      { image: 'node:${NODE_VERSION}-bookworm', name: 'build' },
      { image: 'node:${NODE_VERSION}-bookworm', name: 'install' },
      { image: 'node:${NODE_VERSION}-bookworm-slim' },
    ]);
  });

  it('runs the release command in the build stage and nothing of its own anywhere', () => {
    const runs = stages.map((_, stage) => inStage(stage, 'RUN').map(({ args }) => args));
    expect(runs).toEqual([EXPECTED_RUNS.build, EXPECTED_RUNS.install, EXPECTED_RUNS.runtime]);
    // The build stage only copies the sources in; the install stage takes the release from it alone.
    expect(instructions.filter(({ stage }) => stage === 0).map(({ keyword, args }) => `${keyword} ${args}`)).toEqual([
      'FROM node:${NODE_VERSION}-bookworm AS build',
      'WORKDIR /src',
      'COPY . .',
      'RUN npm ci && npm run release',
    ]);
    expect(inStage(1, 'COPY').map(({ args }) => args)).toEqual(['--from=build /src/release/ ./']);
    expect(inStage(runtime, 'COPY').every(({ args }) => args.startsWith('--from=install '))).toBe(true);
  });

  it('runs as a non-root user, with /data a volume that user owns', () => {
    const user = inStage(runtime, 'USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    expect(inStage(runtime, 'VOLUME').map(({ args }) => args)).toEqual(['/data']);
    expect(EXPECTED_RUNS.runtime[0]).toContain(`chown ${user}:${user} /data`);
    // The database lives on the volume.
    expect(runtimeEnv.get('UGS_DATABASE_URL')).toBe('sqlite:/data/ugs.db');
  });

  it('starts `ugs serve` as PID 1 (exec form: no shell in between), on all interfaces, on the port it exposes', () => {
    expect(inStage(runtime, 'ENTRYPOINT')).toEqual([]);
    expect(execForm(inStage(runtime, 'CMD').at(-1)!.args)).toEqual(['ugs', 'serve']);
    expect(runtimeEnv.get('PATH')?.split(':')[0]).toBe('/opt/ugs/node_modules/.bin');
    expect(runtimeEnv.get('UGS_HOST')).toBe('0.0.0.0');
    expect(inStage(runtime, 'EXPOSE').map(({ args }) => args)).toEqual([runtimeEnv.get('UGS_PORT')]);
    expect(inStage(runtime, 'STOPSIGNAL').map(({ args }) => args)).toEqual(['SIGTERM']);
  });

  it('sets only variables `ugs serve` reads (besides PATH and NODE_OPTIONS), each to a value other than its default', () => {
    const known = serveVariables();
    expect(runtimeEnv.get('NODE_OPTIONS')).toBe(PACKAGED_NODE_OPTIONS);
    for (const [name, value] of runtimeEnv) {
      if (name === 'PATH' || name === 'NODE_OPTIONS') continue;
      expect(known.has(name), `${name} is no variable of ugs serve`).toBe(true);
      if (name !== 'UGS_PORT') expect(String(serveDefault(name)), name).not.toBe(value);
    }
  });

  it('checks health on /readyz with Node alone (the slim image has no curl or wget)', () => {
    const [check] = inStage(runtime, 'HEALTHCHECK');
    const command = execForm(check!.args.slice(check!.args.indexOf('CMD ') + 'CMD '.length));
    expect(command[0]).toBe('node');
    expect(command.join(' ')).toContain('/readyz');
    expect(command.join(' ')).toContain('process.env.UGS_PORT');
    expect(command.join(' ')).not.toMatch(/curl|wget/);
  });

  it('keeps what is built or installed locally, local data and git history out of the build context', () => {
    const ignored = readFileSync(new URL('../../.dockerignore', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    for (const path of ['.git', 'node_modules', 'dist', 'release', 'data']) expect(ignored).toContain(path);
  });
});
