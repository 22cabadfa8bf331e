import type pg from 'pg';
import { checkSchemaName } from './pg-db.ts';

/**
 * The owner's pulse on a PostgreSQL journal, and how a standby tells that the owner froze.
 *
 * The journal's lock is held by the owner's session, which the server ends when the owner's
 * process ends or its host vanishes; a frozen owner (SIGSTOP, a VM paused, a process stuck)
 * keeps its session, and so the lock, for as long as it is frozen, with the standby waiting
 * beside it. So the owner also writes a pulse into the journal every `pulseMs` (half the
 * database timeout), through the journal's own writes: a write that checks the lease, so an
 * owner replaced meanwhile learns it there too. A standby that sees no new pulse for as long as
 * its lapse (three database timeouts, and at least six of the owner's pulses) ends the owner's
 * lock session (pg_terminate_backend: a role may end its own sessions), takes the lock and the
 * lease, and the owner, should it run again, can journal nothing and so send nothing.
 *
 * The pulse names the lease token it was written under: a pulse left by an owner replaced since
 * by a build that does not pulse is not mistaken for a frozen owner's.
 */
export const PULSE_KEY = 'lease_pulse';

export interface Pulse {
  /** The lease token of the owner that wrote it. */
  readonly token: number;
  /** Counts up at each pulse. */
  readonly count: number;
  /** How often that owner pulses. */
  readonly intervalMs: number;
}

/** How often an owner pulses, for a database timeout (STACKER_DATABASE_TIMEOUT). */
export function pulseIntervalMs(databaseTimeoutMs: number): number {
  return Math.max(500, Math.floor(databaseTimeoutMs / 2));
}

/** How long a standby waits for a pulse before it takes a frozen owner's place, for its own database timeout. */
export function lapseMs(databaseTimeoutMs: number): number {
  return 3 * databaseTimeoutMs;
}

export function formatPulse(pulse: Pulse): string {
  return `${pulse.token} ${pulse.count} ${pulse.intervalMs}`;
}

export function parsePulse(text: string): Pulse | null {
  const match = /^(\d+) (\d+) (\d+)$/.exec(text);
  if (match === null) return null;
  return { token: Number(match[1]), count: Number(match[2]), intervalMs: Number(match[3]) };
}

/** The pulse and the lease token now, read on a standby's session; null for a journal with no lease or no pulse yet. */
export async function readPulse(client: pg.Client, schema: string): Promise<{ readonly pulse: Pulse; readonly leaseToken: number } | null> {
  checkSchemaName(schema);
  const tables = await client.query('SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AS found', [`${schema}.journal_meta`, `${schema}.journal_lease`]);
  // A journal its first owner has not made yet: no pulse to watch.
  if (tables.rows[0]?.['found'] !== true) return null;
  const found = await client.query(
    `SELECT (SELECT value FROM ${schema}.journal_meta WHERE key = $1) AS pulse, (SELECT token FROM ${schema}.journal_lease WHERE id = 1) AS token`,
    [PULSE_KEY],
  );
  const row = found.rows[0] as { pulse?: unknown; token?: unknown } | undefined;
  const pulse = typeof row?.pulse === 'string' ? parsePulse(row.pulse) : null;
  if (pulse === null || row?.token === null || row?.token === undefined) return null;
  return { pulse, leaseToken: Number(row.token) };
}

/**
 * A standby's watch on the owner's pulse: `lapsed` after the pulse stood still for the lapse,
 * by the standby's own monotonic clock (no clock of the owner's or the server's is trusted).
 * Never for an owner that does not pulse (an older build), nor across a gap in reading it (the
 * database unreachable: the watch starts again from the next pulse read).
 */
export class PulseWatch {
  readonly #lapseMs: number;
  readonly #monotonicMs: () => number;
  #seen: { readonly text: string; readonly sinceMs: number } | null = null;

  constructor(lapse: number, monotonicMs: () => number = () => performance.now()) {
    this.#lapseMs = lapse;
    this.#monotonicMs = monotonicMs;
  }

  /** Forget what was seen: the next reading starts the watch again. */
  reset(): void {
    this.#seen = null;
  }

  /** Look at a reading; true when the owner's pulse has stood still for the lapse. */
  lapsed(reading: { readonly pulse: Pulse; readonly leaseToken: number } | null): { readonly lapsed: boolean; readonly stillForMs: number } {
    const now = this.#monotonicMs();
    if (reading === null || reading.pulse.token !== reading.leaseToken) {
      this.#seen = null;
      return { lapsed: false, stillForMs: 0 };
    }
    const text = formatPulse(reading.pulse);
    if (this.#seen === null || this.#seen.text !== text) {
      this.#seen = { text, sinceMs: now };
      return { lapsed: false, stillForMs: 0 };
    }
    const stillForMs = now - this.#seen.sinceMs;
    return { lapsed: stillForMs >= Math.max(this.#lapseMs, 6 * reading.pulse.intervalMs), stillForMs };
  }
}
