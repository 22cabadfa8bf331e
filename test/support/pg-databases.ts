import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { type PgClusterInfo, clusterUrl } from './pg-cluster.ts';

/** The cluster vitest's globalSetup started, or null (PostgreSQL is not installed: those tests skip). */
export function pgCluster(): PgClusterInfo | null {
  return inject('pgCluster');
}

/** A new, empty database on the test cluster; its URL. Each test gets its own, so tests never see each other's rows. */
export async function createDatabase(cluster: PgClusterInfo): Promise<string> {
  const name = `t_${randomBytes(8).toString('hex')}`;
  const admin = new pg.Client({ connectionString: clusterUrl(cluster, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return clusterUrl(cluster, name);
}

/** Drop a database made by createDatabase, closing whatever a test left connected to it. */
export async function dropDatabase(cluster: PgClusterInfo, url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: clusterUrl(cluster, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
