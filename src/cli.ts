import { watchUnfinishedExit } from './cli/unfinished-exit.ts';

/**
 * The `stacker` command (bin/stacker.js, which `npm start -- …` and `npx stacker` run, imports
 * this). Run from the TypeScript sources, Node keeps compiled code, and each module's TypeScript
 * with its types stripped, in a cache between runs (in node_modules/.cache, writable by this user
 * only: bin/compile-cache.js says why): a command then
 * starts about 0.3 s sooner. bin/stacker.js turns it on before any TypeScript loads, so a warm
 * start does not even load Node's type stripper (about 30 ms); started as `node src/cli.ts`, it
 * is turned on here, and the commands' modules are imported only after it is on. The
 * compiled daemon (dist/, the Docker image) starts once and keeps its memory: it does without.
 * The exit code is set, not forced, so stdout drains before the process ends; the unref'd
 * timer only fires if a stray handle would keep a finished command alive.
 */
// A process whose work ran out while its command still waited is a failure, not exit 0.
const watch = watchUnfinishedExit(process, process.stderr);

process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  // `stacker codes | head`: the reader left; that is not our failure.
  if (error.code === 'EPIPE') {
    watch.finished();
    process.exit(process.exitCode ?? 0);
  }
  throw error;
});

// `npx stacker -- ping --env-file .env`: the `--` keeps npx's own Node from taking --env-file as
// its own (Node reads that flag anywhere on its command line, up to a `--`); it is not stacker's.
if (import.meta.url.endsWith('.ts')) (await import('../bin/compile-cache.js')).enablePrivateCompileCache();
const { runCli } = await import('./cli/main.ts');
const argv = process.argv.slice(2);
const exitCode = await runCli(argv[0] === '--' ? argv.slice(1) : argv);
watch.finished();
process.exitCode = exitCode;
setTimeout(() => process.exit(exitCode), 2000).unref();
