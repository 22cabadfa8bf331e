import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests start real servers on 127.0.0.1:0; forks keep each file's sockets and timers apart.
    pool: 'forks',
    // One throwaway PostgreSQL cluster for the run (skipped with a notice where PostgreSQL is not installed).
    globalSetup: ['test/support/pg-global-setup.ts'],
  },
});
