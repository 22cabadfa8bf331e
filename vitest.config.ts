import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests start real servers on 127.0.0.1:0; forks keep each file's sockets and timers apart.
    pool: 'forks',
    // Most of the slow files wait in real time (settle windows, restarts, kills), not on the CPU:
    // one worker more than the CPUs halves the run on a 2-CPU machine (vitest's default is one fewer).
    maxWorkers: availableParallelism() + 1,
    // One throwaway PostgreSQL cluster for the run (skipped with a notice where PostgreSQL is not installed).
    globalSetup: ['test/support/pg-global-setup.ts'],
    // A developer's exported STACKER_* settings never reach a test (see the file).
    setupFiles: ['test/support/clean-env.ts'],
  },
});
