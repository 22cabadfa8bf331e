import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway PostgreSQL cluster for the tests: initdb in a temp dir, a server on a free
 * loopback port with its socket in that dir, stopped (immediate) and removed afterwards. The
 * machine's own PostgreSQL service is never touched. initdb refuses to run as root, so as root
 * the cluster belongs to the `postgres` user. Where no PostgreSQL is installed, `findBinDir`
 * says null and the PostgreSQL tests are skipped with a notice.
 */

export interface PgClusterInfo {
  readonly host: string;
  readonly port: number;
  readonly user: string;
}

export interface PgCluster extends PgClusterInfo {
  stop(): void;
  /** Stop the server at once (every session ends) and start it again on the same port after `downMs`. */
  restart(downMs: number): Promise<void>;
  /**
   * SIGSTOP the server and every backend: connections stay open and the kernel still accepts
   * new ones, but nothing answers, as when its VM pauses or a partition drops packets without
   * a reset. Always `thaw` it (in `finally`/afterAll): a stopped server outlives the test.
   */
  freeze(): void;
  /** SIGCONT what `freeze` stopped; harmless when nothing is frozen. */
  thaw(): void;
}

/**
 * The folder of initdb and pg_ctl: `pg_config --bindir`, else the newest of Debian's
 * /usr/lib/postgresql/<version>/bin (where libpq-dev's pg_config names /usr/bin); null when
 * PostgreSQL is not installed.
 */
export function findBinDir(): string | null {
  const hasServer = (dir: string): boolean => dir !== '' && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'));
  const found = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const configured = found.status === 0 ? found.stdout.trim() : '';
  if (hasServer(configured)) return configured;
  const debian = '/usr/lib/postgresql';
  const versions = existsSync(debian) ? readdirSync(debian).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a)) : [];
  return versions.map((version) => join(debian, version, 'bin')).find(hasServer) ?? null;
}

/**
 * runuser, which lives in an sbin folder: a root shell whose PATH leaves those out (a minimal
 * container's, a `PATH=/usr/bin:/bin` given on purpose) still finds it.
 */
function findRunuser(): string {
  const onPath = spawnSync('runuser', ['--version'], { encoding: 'utf8' });
  if (onPath.error === undefined) return 'runuser';
  const known = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser', '/bin/runuser'].find((path) => existsSync(path));
  if (known === undefined) throw new Error('as root, the PostgreSQL tests run initdb as the postgres user through runuser (util-linux), which was not found');
  return known;
}

export const PG_SKIP_NOTICE = 'PostgreSQL not found: the PostgreSQL journal tests are skipped (install Debian\'s postgresql package to run them)';

export interface ClusterOptions {
  /** Files written into the cluster's folder by name, owned by the server's user and readable by it alone (as a TLS key must be). */
  readonly files?: Readonly<Record<string, string>>;
  /** More server settings, as `name=value`; `{root}` stands for the cluster's folder, where `files` are. */
  readonly settings?: readonly string[];
  /** The `postgres` user's password, asked of every connection (SCRAM) instead of trusting loopback. */
  readonly password?: string;
}

export async function startCluster(binDir: string, options: ClusterOptions = {}): Promise<PgCluster> {
  const root = mkdtempSync(join(tmpdir(), 'stacker-pg-'));
  const asRoot = userInfo().uid === 0;
  const owner = asRoot ? Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()) : null;
  const group = asRoot ? Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()) : null;
  if (owner !== null) chownSync(root, owner, group ?? owner);
  chmodSync(root, 0o700);
  const runuser = owner === null ? null : findRunuser();
  const run = (tool: string, args: readonly string[]): void => {
    const command = runuser ?? join(binDir, tool);
    const fullArgs = runuser === null ? args : ['-u', 'postgres', '--', join(binDir, tool), ...args];
    const done = spawnSync(command, fullArgs, { encoding: 'utf8', cwd: root });
    if (done.error !== undefined) throw new Error(`${tool} could not be started (${command}): ${done.error.message}`);
    if (done.status !== 0) throw new Error(`${tool} failed (${done.status}): ${done.stderr || done.stdout}`);
  };
  const data = join(root, 'data');
  const extra = (options.settings ?? []).map((setting) => ` -c ${setting.replaceAll('{root}', root)}`).join('');
  const port = await freePort();
  const files = { ...options.files, ...(options.password === undefined ? {} : { pwfile: options.password }) };
  for (const [name, text] of Object.entries(files)) {
    const path = join(root, name);
    writeFileSync(path, text, { mode: 0o600 });
    if (owner !== null) chownSync(path, owner, group ?? owner);
  }
  // --no-sync: the cluster is thrown away; the server itself runs with fsync on, as in production.
  const auth = options.password === undefined ? ['-A', 'trust'] : ['-A', 'scram-sha-256', `--pwfile=${join(root, 'pwfile')}`];
  run('initdb', ['-D', data, ...auth, '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale', 'C']);
  const start = (): void => run('pg_ctl', ['-D', data, '-l', join(root, 'server.log'), '-w', '-o', `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=on -c max_connections=200${extra}`, 'start']);
  start();
  let stopped = false;
  let frozen: number[] = [];
  const thaw = (): void => {
    for (const pid of frozen) signal(pid, 'SIGCONT');
    frozen = [];
  };
  return {
    host: '127.0.0.1',
    port,
    user: 'postgres',
    async restart(downMs) {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      await new Promise((resolve) => setTimeout(resolve, downMs));
      start();
    },
    freeze() {
      // The postmaster first, so that it forks no backend while its children are being stopped.
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      signal(postmaster, 'SIGSTOP');
      frozen.push(postmaster);
      for (const pid of childrenOf(postmaster)) {
        signal(pid, 'SIGSTOP');
        frozen.push(pid);
      }
    },
    thaw,
    stop() {
      if (stopped) return;
      stopped = true;
      thaw();
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}

/** The processes whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        // Fields after the command, which may hold spaces and parentheses: state, then the parent's pid.
        const stat = readFileSync(join('/proc', name, 'stat'), 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

export function clusterUrl(info: PgClusterInfo, database: string): string {
  return `postgres://${info.user}@${info.host}:${info.port}/${database}`;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
