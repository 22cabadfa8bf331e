/**
 * stacker laid out as the Docker image holds it, without Docker: `dist/` compiled by
 * tsconfig.build.json (the build stage), `bin/` and `config/` beside it. Used by the bench, the
 * soak and test/e2e/compiled-daemon.test.ts. Put `app` under the repository's node_modules/.cache
 * so the compiled files resolve the repository's packages as /app/dist does.
 */
import { cpSync, copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = new URL('..', import.meta.url).pathname;

/** Replaces `app` with a fresh layout and returns it. */
export function buildImageApp(app: string): string {
  rmSync(app, { recursive: true, force: true });
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(app, 'dist')], { cwd: ROOT });
  mkdirSync(join(app, 'bin'));
  copyFileSync(join(ROOT, 'bin/daemon.sh'), join(app, 'bin/daemon.sh'));
  copyFileSync(join(ROOT, 'bin/stacker'), join(app, 'bin/stacker'));
  cpSync(join(ROOT, 'config'), join(app, 'config'), { recursive: true });
  return app;
}

/** What the image's final stage says about how it runs: its ENV, USER, ENTRYPOINT, CMD and HEALTHCHECK command. */
export interface ImageFacts {
  readonly env: Readonly<Record<string, string>>;
  readonly user: string | null;
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  readonly healthcheck: readonly string[];
}

/**
 * Read those five from the Dockerfile (exec forms are JSON arrays; ENV is KEY=value pairs).
 * Not a Dockerfile reader: enough to start the compiled daemon the way the image would.
 */
export function imageFacts(text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')): ImageFacts {
  const instructions = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const lastFrom = instructions.map((line) => /^FROM\s/i.test(line)).lastIndexOf(true);
  const final = instructions.slice(lastFrom + 1);
  const args = (keyword: string): string | undefined => final.filter((line) => line.toUpperCase().startsWith(`${keyword} `)).pop()?.slice(keyword.length + 1).trim();
  const env: Record<string, string> = {};
  for (const line of final.filter((l) => /^ENV\s/i.test(l))) {
    for (const pair of line.slice(4).trim().split(/\s+/)) {
      const at = pair.indexOf('=');
      if (at > 0) env[pair.slice(0, at)] = pair.slice(at + 1);
    }
  }
  const execForm = (value: string | undefined): string[] => (value === undefined ? [] : (JSON.parse(value) as string[]));
  const health = args('HEALTHCHECK');
  return {
    env,
    user: args('USER') ?? null,
    entrypoint: execForm(args('ENTRYPOINT')),
    cmd: execForm(args('CMD')),
    healthcheck: health === undefined ? [] : execForm(health.slice(health.indexOf('CMD ') + 4)),
  };
}

/** The Dockerfile's ENTRYPOINT (exec form, paths relative to its WORKDIR), resolved against `app`. */
export function imageEntry(app: string): [string, ...string[]] {
  const [program, ...rest] = imageFacts().entrypoint;
  if (program === undefined) throw new Error('the Dockerfile has no ENTRYPOINT in exec form');
  return [program, ...rest.map((arg) => (arg.startsWith('bin/') ? join(app, arg) : arg))];
}
