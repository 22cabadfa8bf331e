import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { copies, envPairs, execForm, healthcheck, instructions, last, parseDockerfile, stage, volumes } from '../../scripts/dockerfile.ts';
import { isIgnored, parseDockerignore } from '../../scripts/dockerignore.ts';

/**
 * The image's invariants, read from the real Dockerfile and .dockerignore. No Docker engine
 * runs here; scripts/dockerfile-steps.sh replays the build itself.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const dockerfile = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const final = stage(dockerfile, 'final');
const ignoreRules = parseDockerignore(readFileSync(join(ROOT, '.dockerignore'), 'utf8'));
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };

describe('the Dockerfile', () => {
  it('builds every stage on a Node 24 slim image pinned to a minor version', () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    for (const s of dockerfile.stages) expect(s.image).toMatch(/^node:24\.\d+(\.\d+)?-slim$/);
  });

  it('uses the same Node minor version as the one the repository pins', () => {
    const pinned = packageJson.devDependencies['node'];
    const tag = /^node:(24\.\d+)/.exec(final.image)?.[1];
    expect(pinned?.startsWith(`${tag}.`)).toBe(true);
  });

  it('installs production dependencies only, exactly from the lockfile, without install scripts', () => {
    const deps = dockerfile.stages[0];
    if (deps === undefined) throw new Error('no stages');
    const runs = instructions(deps, 'RUN').map((run) => run.args);
    const install = runs.find((run) => run.includes('npm ci'));
    expect(install).toMatch(/npm ci\b.*--omit=dev/);
    expect(install).toContain('--ignore-scripts');
    expect(runs.join(' ')).not.toMatch(/npm (install|i)\b/);
    // The pinned `node` binary is a devDependency, so --omit=dev keeps it out of the image.
    expect(packageJson.devDependencies['node']).toBeDefined();
  });

  it('copies only sources that exist in the repository and are not left out of the build context', () => {
    for (const s of dockerfile.stages) {
      for (const copy of copies(s)) {
        if (copy.from !== null) {
          expect(dockerfile.stages.some((other) => other.name === copy.from)).toBe(true);
          continue;
        }
        for (const source of copy.sources) {
          expect(existsSync(join(ROOT, source)), `COPY ${source} (line ${copy.line})`).toBe(true);
          expect(isIgnored(ignoreRules, source), `COPY ${source} is excluded by .dockerignore`).toBe(false);
        }
      }
    }
  });

  it('copies what the daemon runs: compiled stacker, its start script, config, package files and production node_modules', () => {
    const sources = copies(final).flatMap((copy) => copy.sources.map((source) => `${copy.from === null ? '' : `${copy.from}:`}${source.replace(/\/$/, '')}`));
    expect(sources).toEqual(expect.arrayContaining(['deps:/app/node_modules', 'build:/app/dist', 'bin/daemon.sh', 'package.json', 'package-lock.json', 'config']));
    // No TypeScript sources and nothing of the build stage but its output: its node_modules has the dev tools.
    expect(sources.filter((source) => source.startsWith('build:'))).toEqual(['build:/app/dist']);
    expect(sources.some((source) => /^(src|strategies|test|bench|scripts|\.env|\.git|data)\b/.test(source))).toBe(false);
  });

  it('compiles the sources and strategies with tsconfig.build.json, which emits both into dist/', () => {
    const build = dockerfile.stages.find((s) => s.name === 'build');
    if (build === undefined) throw new Error('no build stage');
    expect(copies(build).flatMap((copy) => copy.sources)).toEqual(expect.arrayContaining(['tsconfig.json', 'tsconfig.build.json', 'src/', 'strategies/']));
    expect(instructions(build, 'RUN').map((run) => run.args)).toContain('node node_modules/typescript/bin/tsc -p tsconfig.build.json');
    // tsconfig.build.json is JSON with comments, as tsc reads it.
    const text = readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8').replace(/^\s*\/\/.*$/gm, '');
    const config = JSON.parse(text) as { compilerOptions: Record<string, unknown>; include: string[] };
    expect(config.compilerOptions).toMatchObject({ outDir: 'dist', rootDir: '.', noEmit: false, rewriteRelativeImportExtensions: true });
    expect(config.include).toEqual(['src', 'strategies']);
  });

  it('leaves the application owned by root (no --chown) and runs as the non-root node user', () => {
    for (const copy of copies(final)) expect(copy.chown).toBeNull();
    const user = last(final, 'USER');
    expect(user).toBe('node');
    // USER comes after every RUN, so nothing runs as root at start-up.
    const userLine = instructions(final, 'USER').at(-1)?.line ?? 0;
    for (const run of instructions(final, 'RUN')) expect(run.line).toBeLessThan(userLine);
  });

  it('keeps its data in a /data volume the node user owns', () => {
    expect(volumes(final)).toEqual(['/data']);
    expect(instructions(final, 'RUN').some((run) => /mkdir -p \/data\b.*chown node:node \/data\b/.test(run.args))).toBe(true);
  });

  it('points stacker at the volume and serves metrics on every interface, on the port it exposes', () => {
    const env = Object.fromEntries(envPairs(final));
    expect(env).toMatchObject({ STACKER_DATA_DIR: '/data', STACKER_METRICS_PORT: '9464', STACKER_METRICS_HOST: '0.0.0.0' });
    expect(last(final, 'EXPOSE')).toBe(env['STACKER_METRICS_PORT']);
    // No secret is baked into the image.
    expect(Object.keys(env).some((key) => /KEY|SECRET|TOKEN|PASSWORD/i.test(key))).toBe(false);
  });

  it('probes /healthz with node itself (no curl) in exec form, with a timeout shorter than the check', () => {
    const check = healthcheck(final);
    expect(check).not.toBeNull();
    expect(check?.command?.slice(0, 2)).toEqual(['node', '-e']);
    const script = check?.command?.[2] ?? '';
    expect(script).toContain('/healthz');
    expect(script).toContain('process.env.STACKER_METRICS_PORT');
    expect(script).toMatch(/AbortSignal\.timeout\((\d+)\)/);
    const abortMs = Number(/AbortSignal\.timeout\((\d+)\)/.exec(script)?.[1]);
    expect(abortMs).toBeLessThan(Number.parseInt(check?.options['timeout'] ?? '30', 10) * 1000);
    expect(check?.options).toMatchObject({ interval: expect.any(String), 'start-period': expect.any(String), retries: expect.any(String) });
  });

  it('is a valid script: the health probe parses as JavaScript', () => {
    const script = healthcheck(final)?.command?.[2] ?? '';
    expect(() => new Function(script)).not.toThrow();
  });

  it('starts the compiled `stacker run` through bin/daemon.sh (which execs Node) and stops it with SIGTERM', () => {
    expect(execForm(last(final, 'ENTRYPOINT') ?? '')).toEqual(['sh', 'bin/daemon.sh']);
    expect(readFileSync(join(ROOT, 'bin', 'daemon.sh'), 'utf8')).toMatch(/^\s*exec node .*"\$cli" "\$@"$/m);
    expect(execForm(last(final, 'CMD') ?? '')).toEqual(['run']);
    expect(last(final, 'STOPSIGNAL')).toBe('SIGTERM');
    expect(last(final, 'WORKDIR')).toBe('/app');
    expect(existsSync(join(ROOT, 'src', 'cli.ts'))).toBe(true);
  });
});

describe('the .dockerignore', () => {
  it.each(['.env', '.env.local', 'config/.env', 'node_modules', 'node_modules/pino/package.json', 'src/node_modules/x', '.git/config', 'data/stacker.db', 'stacker.db', 'data/dry-run.db-wal', 'test/e2e/daemon.test.ts', 'dist/src/cli.js'])('leaves %s out of the build context', (path) => {
    expect(isIgnored(ignoreRules, path)).toBe(true);
  });

  it.each(['src/cli.ts', 'strategies/dca.ts', 'tsconfig.json', 'tsconfig.build.json', 'config/strategies/dca-btc.env', 'package.json', 'package-lock.json', 'README.md'])('keeps %s in the build context', (path) => {
    expect(isIgnored(ignoreRules, path)).toBe(false);
  });
});
