/**
 * stacker laid out as the Docker image holds it, without Docker: `dist/` compiled by
 * tsconfig.build.json (the build stage) and `bin/daemon.sh` (the ENTRYPOINT) beside it. Used by
 * the bench, the soak and test/e2e/compiled-daemon.test.ts. Put `app` under the repository's
 * node_modules/.cache so the compiled files resolve the repository's packages as /app/dist does.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { execForm, last, parseDockerfile, stage } from './dockerfile.ts';

const ROOT = new URL('..', import.meta.url).pathname;

/** Replaces `app` with a fresh layout and returns it. */
export function buildImageApp(app: string): string {
  rmSync(app, { recursive: true, force: true });
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(app, 'dist')], { cwd: ROOT });
  mkdirSync(join(app, 'bin'));
  copyFileSync(join(ROOT, 'bin/daemon.sh'), join(app, 'bin/daemon.sh'));
  copyFileSync(join(ROOT, 'bin/stacker'), join(app, 'bin/stacker'));
  return app;
}

/** The Dockerfile's ENTRYPOINT (exec form, paths relative to its WORKDIR), resolved against `app`. */
export function imageEntry(app: string): [string, ...string[]] {
  const final = stage(parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')), 'final');
  const [program, ...args] = execForm(last(final, 'ENTRYPOINT') ?? '') ?? [];
  if (program === undefined) throw new Error('the Dockerfile has no ENTRYPOINT in exec form');
  return [program, ...args.map((arg) => (existsSync(join(app, arg)) ? join(app, arg) : arg))];
}
