import { afterAll, beforeAll } from 'vitest';
import { type ClusterOptions, type PgCluster, findBinDir, startCluster } from './pg-cluster.ts';

/**
 * A cluster of a test file's own, for what the shared one must not see (a restart, a password,
 * TLS): started before the file's tests (its options read then, so that they may name files made
 * by an earlier beforeAll), stopped after them. `available` is false where PostgreSQL is not
 * installed, and the file's tests skip.
 */
export function ownClusterPerFile(options: () => ClusterOptions = () => ({})): { readonly available: boolean; cluster(): PgCluster } {
  const binDir = findBinDir();
  let started: PgCluster | null = null;
  beforeAll(async () => {
    if (binDir !== null) started = await startCluster(binDir, options());
  }, 60_000);
  afterAll(() => {
    started?.stop();
  });
  return {
    available: binDir !== null,
    cluster() {
      if (started === null) throw new Error('the cluster of this file did not start');
      return started;
    },
  };
}
