import { join } from 'node:path';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import type { RunningDaemon } from './daemon-process.ts';

/** A control token good enough for STACKER_CONTROL_TOKEN (16+ printable characters). */
export const CONTROL_TOKEN = 'test-control-token-0123456789';

/** The daemon's status server, read from its start-up log line (it listens on a free port: STACKER_METRICS_PORT=0). */
export async function statusUrl(daemon: RunningDaemon): Promise<string> {
  await daemon.waitFor('"event":"scheduled"');
  const line = daemon
    .output()
    .split('\n')
    .find((text) => text.includes('"event":"metrics"'));
  const url = line === undefined ? undefined : (JSON.parse(line) as { url?: string }).url;
  if (url === undefined) throw new Error(`no metrics url in the daemon's output:\n${daemon.output().slice(-2000)}`);
  return url;
}

export interface InstanceView {
  readonly name: string;
  readonly paused: { readonly since: string } | null;
  readonly lastSlot: { readonly slotTime: string; readonly status: string; readonly reason: string | null; readonly settled?: string | null } | null;
  readonly recentSlots: readonly { readonly slotTime: string; readonly status: string; readonly reason: string | null }[];
  readonly [key: string]: unknown;
}

export interface StatusView {
  readonly instances: readonly InstanceView[];
  readonly killSwitch: { readonly on: boolean; readonly reasons: readonly string[]; readonly operatorSince: string | null };
  readonly health: { readonly status: string; readonly problems: readonly string[] };
  readonly controls: { readonly enabled: boolean };
  readonly [key: string]: unknown;
}

export async function readStatus(url: string): Promise<StatusView> {
  const response = await fetch(`${url}/api/status`);
  if (response.status !== 200) throw new Error(`GET /api/status answered ${response.status}`);
  return (await response.json()) as StatusView;
}

export async function instanceOf(url: string, name: string): Promise<InstanceView> {
  const instance = (await readStatus(url)).instances.find((i) => i.name === name);
  if (instance === undefined) throw new Error(`no instance ${name} in /api/status`);
  return instance;
}

/** POST a control; `token` null sends no Authorization header. */
export async function postControl(url: string, path: string, token: string | null, body?: unknown): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown>, headers: response.headers };
}

/** Polls until `check` holds (or fails with its last error after `timeoutMs`). */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** The live journal of a stopped daemon's data dir, read-only. */
export async function withLiveJournal<T>(dataDir: string, read: (journal: SqliteJournal) => Promise<T>): Promise<T> {
  const journal = new SqliteJournal({ path: join(dataDir, 'stacker.db'), readOnly: true });
  await journal.open();
  try {
    return await read(journal);
  } finally {
    await journal.close();
  }
}
