import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { type Server, type Socket, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadDaemonConfig } from '../../src/config/daemon-config.ts';
import { openDaemonStore } from '../../src/daemon/daemon-store.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { type OpenedStore, openStore } from '../../src/store/open-store.ts';
import { createDatabase, dropDatabase, pgCluster } from '../support/pg-databases.ts';

/**
 * A hot standby that cannot reach its database cannot take over: its /healthz says so (503, and
 * why) instead of "ok", and its log keeps saying so while it lasts, until the database answers.
 * The database sits behind a gate on 127.0.0.1 that first cuts every connection (a database
 * restarting, a host that does not answer) and then lets them through to the test cluster.
 */

const cluster = pgCluster();
const PASSWORD = 'pw-never-shown';
let dir: string;
let dbUrl: string;
let gate: Gate;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stacker-standby-health-'));
  if (cluster === null) return;
  dbUrl = await createDatabase(cluster);
  gate = await openGate(cluster.port);
});
afterEach(async () => {
  await gate?.close();
  if (cluster !== null) await dropDatabase(cluster, dbUrl);
  rmSync(dir, { recursive: true, force: true });
});

interface Gate {
  readonly port: number;
  /** From now on, connections reach the database. */
  open(): void;
  close(): Promise<void>;
}

/** A TCP gate: cuts every connection until opened, then forwards each to the cluster's port. */
async function openGate(target: number): Promise<Gate> {
  let through = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (!through) {
      socket.destroy();
      return;
    }
    const upstream = connect(target, '127.0.0.1');
    upstream.on('error', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    open: () => {
      through = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A strategies folder holding one daily dca instance: what a standby loads and then waits with. */
function dcaStrategies(): string {
  const strategies = join(dir, 'strategies');
  mkdirSync(strategies);
  writeFileSync(join(strategies, 'dca-btc.env'), 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\n');
  return strategies;
}

/** A logger whose lines are kept, and what it has written so far. */
async function capturedLog(): Promise<{ logger: Awaited<ReturnType<typeof createLogger>>; log: () => string }> {
  let text = '';
  const logger = await createLogger({ level: 'info', destination: new Writable({ write: (chunk, _encoding, done) => void ((text += String(chunk)), done()) }) });
  return { logger, log: () => text };
}

describe.skipIf(cluster === null)('a hot standby whose database cannot be reached', () => {
  it('answers 503 on /healthz saying why, logs it more than once while it lasts, and is healthy again once the database answers', async () => {
    const strategies = dcaStrategies();
    const gated = new URL(dbUrl);
    gated.port = String(gate.port);
    gated.password = PASSWORD;
    const config = await loadDaemonConfig({ strategiesDir: strategies, dataDir: join(dir, 'standby') }, { env: { STACKER_DATABASE_URL: gated.toString(), STACKER_METRICS_PORT: '0' } });
    // An owner holds the journal, so that the standby, once it reaches the database, waits on.
    const owner: OpenedStore = await openStore({ dataDir: join(dir, 'owner'), mode: config.mode, databaseUrl: dbUrl, pid: 1111, hostname: 'host-a' });
    const { logger, log } = await capturedLog();
    const stop = new AbortController();
    const standby = openDaemonStore({ config, logger, rebuildJournal: false, standby: true, stop: stop.signal, handleSignals: false, metrics: new Metrics({ mode: config.mode }), unreachableLogEveryMs: 500 });
    let took: OpenedStore | null = null;
    try {
      await expect.poll(() => /"event":"metrics","url":"(http:[^"]+)"/.exec(log())?.[1]).toBeDefined();
      const healthz = `${/"event":"metrics","url":"(http:[^"]+)"/.exec(log())?.[1]}/healthz`;
      await expect.poll(async () => (await fetch(healthz)).status).toBe(503);
      const body = (await (await fetch(healthz)).json()) as { status: string; problems: string[] };
      expect(body.status).toBe('unhealthy');
      expect(body.problems).toEqual([expect.stringMatching(/^waiting as a hot standby, but the journal's database cannot be reached since \S+ \(taking the PostgreSQL advisory lock .*\): this standby cannot take over until it can$/)]);
      // Tried every second, told a line per 500 ms here (a minute by default), each with how many tries since.
      await expect.poll(() => log().match(/"event":"standby-db-unreachable"/g)?.length ?? 0, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      expect(log()).toMatch(/"event":"standby-db-unreachable","error":"[^"]+","since":"[^"]+","tries":1,/);
      expect(`${log()}${JSON.stringify(body)}`).not.toContain(PASSWORD);
      // Why, not where: the database's address is in the log only.
      expect(JSON.stringify(body)).not.toContain(`:${gate.port}`);
      expect(log()).toContain(`:${gate.port}`);

      gate.open();
      await expect.poll(async () => (await fetch(healthz)).status, { timeout: 10_000 }).toBe(200);
      expect(log()).toContain('"event":"standby-db-reachable"');
      // Told on the lock's next try, which may come after the first healthy answer.
      await expect.poll(() => log(), { timeout: 5_000 }).toContain('"event":"standby"');
      // Still the standby: it takes over when the owner ends.
      await owner.close();
      took = await standby;
      expect(took?.journal.path).toContain(`127.0.0.1:${gate.port}`);
    } finally {
      stop.abort();
      await (took ?? (await standby.catch(() => null)))?.close();
      await owner.close().catch(() => undefined);
    }
  }, 30_000);

  it("serves only the hosts STACKER_METRICS_ALLOWED_HOSTS names while it waits, as the owner's page does", async () => {
    const strategies = dcaStrategies();
    const config = await loadDaemonConfig(
      { strategiesDir: strategies, dataDir: join(dir, 'standby') },
      { env: { STACKER_DATABASE_URL: dbUrl, STACKER_METRICS_PORT: '0', STACKER_METRICS_HOST: '0.0.0.0', STACKER_METRICS_ALLOWED_HOSTS: 'stacker.example' } },
    );
    const owner: OpenedStore = await openStore({ dataDir: join(dir, 'owner'), mode: config.mode, databaseUrl: dbUrl, pid: 1111, hostname: 'host-a' });
    const { logger, log } = await capturedLog();
    const stop = new AbortController();
    const standby = openDaemonStore({ config, logger, rebuildJournal: false, standby: true, stop: stop.signal, handleSignals: false, metrics: new Metrics({ mode: config.mode }) });
    try {
      await expect.poll(() => /"event":"metrics","url":"http:[^"]+:(\d+)"/.exec(log())?.[1]).toBeDefined();
      const port = Number(/"event":"metrics","url":"http:[^"]+:(\d+)"/.exec(log())?.[1]);
      const statusWithHost = (host: string): Promise<number> =>
        new Promise((resolve, reject) => {
          const request = httpRequest({ host: '127.0.0.1', port, path: '/healthz', headers: { host } }, (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          });
          request.on('error', reject);
          request.end();
        });
      expect(await statusWithHost('evil.example')).toBe(421);
      expect(await statusWithHost(`stacker.example:${port}`)).toBe(200);
    } finally {
      stop.abort();
      await (await standby.catch(() => null))?.close();
      await owner.close().catch(() => undefined);
    }
  }, 30_000);

  it('told to stop while the database cannot be reached, it stops cleanly: nothing was journalled or sent', async () => {
    const strategies = dcaStrategies();
    const config = await loadDaemonConfig({ strategiesDir: strategies, dataDir: join(dir, 'standby') }, { env: { STACKER_DATABASE_URL: `postgres://stacker@127.0.0.1:${gate.port}/stacker` } });
    const { logger, log } = await capturedLog();
    const stop = new AbortController();
    const standby = openDaemonStore({ config, logger, rebuildJournal: false, standby: true, stop: stop.signal, handleSignals: false, metrics: new Metrics({ mode: config.mode }) });
    await expect.poll(() => log()).toContain('"event":"standby-db-unreachable"');
    stop.abort();
    expect(await standby).toBeNull();
    expect(log()).toContain('"event":"standby-stopped"');
  });
});
