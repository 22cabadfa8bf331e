import type { TestProject } from 'vitest/node';
import { PG_SKIP_NOTICE, type PgClusterInfo, findBinDir, startCluster } from './pg-cluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The throwaway cluster every PostgreSQL test uses; null when PostgreSQL is not installed. */
    pgCluster: PgClusterInfo | null;
  }
}

/**
 * One cluster for the whole run (vitest globalSetup): starting it takes about a second, and each
 * test still gets a database of its own (test/support/pg-databases.ts).
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const binDir = findBinDir();
  if (binDir === null) {
    console.warn(PG_SKIP_NOTICE);
    project.provide('pgCluster', null);
    return () => undefined;
  }
  const cluster = await startCluster(binDir);
  project.provide('pgCluster', { host: cluster.host, port: cluster.port, user: cluster.user });
  return () => cluster.stop();
}
