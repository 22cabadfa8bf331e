import { type ChildProcess, spawn } from 'node:child_process';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { TempWorld } from './helpers.ts';

const CHILD = fileURLToPath(new URL('./fixtures/journal-child.ts', import.meta.url));

let world: TempWorld;
let child: ChildProcess | undefined;
beforeEach(() => {
  world = new TempWorld();
});
afterEach(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  await world.cleanup();
});

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Start the child; `onLine` sees each stdout line as it arrives. */
function runChild(mode: 'self-kill' | 'stream', onLine: (line: string, process: ChildProcess) => void = () => {}): Promise<Exit> {
  const started = spawn(process.execPath, [CHILD, world.path(), mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  child = started;
  let stdout = '';
  let stderr = '';
  let pending = '';
  started.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) onLine(line, started);
  });
  started.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    started.on('error', reject);
    started.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

describe('durability', () => {
  it('keeps a pending intent journalled before a kill -9, and reconciliation finds it after reopen', async () => {
    const exit = await runChild('self-kill');
    expect(exit, exit.stderr).toMatchObject({ signal: 'SIGKILL', stdout: 'ok\n' });

    const journal = await world.opened();
    const unresolved = await journal.unresolvedIntents();
    expect(unresolved).toHaveLength(1);
    expect(unresolved[0]).toMatchObject({ instance: 'dca-btc', slotTimeMs: 1_735_689_600_000, status: 'pending' });
    const intent = unresolved[0]?.intent;
    expect(intent?.kind === 'buy-stock-market' && formatDecimal(intent.amount)).toBe('0.000123456789012345678901234567');
    expect(await journal.claimSlot({ instance: 'dca-btc', slotTimeMs: 1_735_689_600_000, runId: null })).toBe(false);
    const restarted = await journal.startRun({ mode: 'live', pid: process.pid, version: 'test' });
    const runs = await journal.listRuns();
    expect(runs.find((run) => run.version === 'crash-test')).toMatchObject({ exitReason: 'interrupted', endedAtMs: null });
    expect(runs.find((run) => run.runId === restarted.runId)).toMatchObject({ exitReason: null });
  });

  it('keeps every commit acknowledged before the parent kills the writer mid-stream', async () => {
    const acknowledged: number[] = [];
    const exit = await runChild('stream', (line, running) => {
      const match = /^ok (\d+)$/.exec(line);
      if (match === null) return;
      acknowledged.push(Number(match[1]));
      if (acknowledged.length === 25) running.kill('SIGKILL');
    });
    expect(exit.signal, exit.stderr).toBe('SIGKILL');
    expect(acknowledged.length).toBeGreaterThanOrEqual(25);

    const journal = await world.opened();
    const journalled = new Set((await journal.listSlots({ instance: 'stream' })).map((slot) => slot.slotTimeMs / 60_000));
    for (const n of acknowledged) expect(journalled.has(n), `slot ${n} was acknowledged`).toBe(true);
    const intents = await journal.listIntents({ instance: 'stream' });
    expect(intents.length).toBe(journalled.size);
    for (const record of intents) {
      const n = record.slotTimeMs / 60_000;
      expect(record.intent.kind === 'buy-stock-market' && formatDecimal(record.intent.amount)).toBe(formatDecimal(new Decimal(`0.${n + 1}`)));
    }
    await journal.close();
    const raw = new DatabaseSync(world.path(), { readOnly: true });
    expect(raw.prepare('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
    raw.close();
  });
});
