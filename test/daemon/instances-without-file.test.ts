import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { loadDaemonConfig } from '../../src/config/daemon-config.ts';
import { runDaemon } from '../../src/daemon/daemon.ts';
import { Decimal } from '../../src/domain/money.ts';
import { INSTANT_TIMING } from '../../src/engine/runtime.ts';
import { VirtualClock } from '../../src/engine/schedule/clock.ts';
import { ApiMarketData } from '../../src/exchange/market-data.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { startSandbox } from '../../src/sandbox/server.ts';
import { PaperExchange } from '../../src/sim/paper-exchange.ts';
import { openStore } from '../../src/store/open-store.ts';
import { runCli } from '../cli/run-cli.ts';

// Budgets belong to the instance's name, which is its file's: a renamed file starts afresh and
// buys again in a period the old name spent. The start and `stacker check` say so.

const dir = mkdtempSync(join(tmpdir(), 'stacker-without-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DCA_50_A_DAY = 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0005\nBUDGET_QUOTE_PER_DAY=50\n';
const ENV = { STACKER_DRY_RUN_WALLET: 'USDT=1000' };

/** `run --once` of these instances in dry-run on the sandbox's prices; every log line it wrote. */
async function runOnce(strategies: string, dataDir: string, url: string, instances: readonly string[], nowMs: number): Promise<Array<Record<string, unknown>>> {
  const config = await loadDaemonConfig({ strategiesDir: strategies, dataDir }, { env: ENV });
  const clock = new VirtualClock(nowMs);
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const exchange = new PaperExchange({ marketData: new ApiMarketData(new ApiClient({ baseUrl: url })), wallet: config.dryRunWallet, slippagePct: config.dryRunSlippagePct, clock });
  await runDaemon({ config, logger: await createLogger({ level: 'warn', destination }), exchange, metrics: new Metrics({ mode: 'dry-run' }), clock, timing: INSTANT_TIMING, once: { instances } });
  return lines;
}

const warnings = (lines: ReadonlyArray<Record<string, unknown>>) => lines.filter((line) => line['event'] === 'instance-without-file');

describe('an instance the journal holds whose file is gone or disabled', () => {
  it('is named at start and by check, with what it spent in which period, and that the new name starts afresh', async () => {
    const strategies = join(dir, 'renamed');
    const dataDir = join(dir, 'data-renamed');
    mkdirSync(strategies);
    writeFileSync(join(strategies, 'dca-a.env'), DCA_50_A_DAY);
    const sandbox = await startSandbox();
    try {
      const nowMs = Date.now();
      expect(warnings(await runOnce(strategies, dataDir, sandbox.url, ['dca-a'], nowMs))).toEqual([]);
      // The operator tidies the name.
      renameSync(join(strategies, 'dca-a.env'), join(strategies, 'dca-a2.env'));
      const lines = await runOnce(strategies, dataDir, sandbox.url, ['dca-a2'], nowMs + 1_000);
      const [warned] = warnings(lines);
      expect(warned).toMatchObject({ level: 40, instance: 'dca-a', state: 'no-file', file: join(strategies, 'dca-a.env'), unresolved: 0 });
      expect(warned?.['spent']).toEqual([
        { period: 'day', from: expect.stringMatching(/^\d{4}-\d\d-\d\d$/), amount: expect.stringMatching(/^3\d\.\d+$/), asset: 'USDT', timeZone: 'UTC' },
        expect.objectContaining({ period: 'week' }),
        expect.objectContaining({ period: 'month' }),
      ]);
      expect(String(warned?.['msg'])).toMatch(
        new RegExp(
          `^the journal holds instance dca-a, which has no file any more \\(${join(strategies, 'dca-a.env').replace(/[.]/g, '\\.')}\\): it spent 3\\d\\.\\d+ USDT on \\d{4}-\\d\\d-\\d\\d, .* \\(UTC\\), budget periods that are not over\\. ` +
            'Renamed\\? Its budget stays with dca-a: dca-a2, new to this journal, starts afresh, and buys again in those periods \\(an account cap still counts both\\)\\. To go on with its budget, name the file dca-a\\.env again$',
        ),
      );

      const checked = await runCli(['check', '--strategies', strategies, '--data-dir', dataDir], { ...ENV, STACKER_BASE_URL: sandbox.url });
      expect(checked.code, checked.stderr).toBe(0);
      expect(checked.stdout).toContain(`\nwarning: ${String(warned?.['msg']).replace('dca-a2, new to this journal, starts', 'a file under another name starts')}\n`);
    } finally {
      await sandbox.stop();
    }
  });

  it("names an instance paused from the status API whose file was renamed: the pause is the old name's, and the new name buys at its first slot", async () => {
    const strategies = join(dir, 'paused');
    const dataDir = join(dir, 'data-paused');
    mkdirSync(strategies);
    // A buy the wallet cannot pay: nothing spent that a new name could spend again, and still a pause a rename drops.
    const noBudget = 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=1\n';
    writeFileSync(join(strategies, 'dca-a.env'), noBudget);
    const sandbox = await startSandbox();
    try {
      const nowMs = Date.now();
      await runOnce(strategies, dataDir, sandbox.url, ['dca-a'], nowMs);
      const store = await openStore({ dataDir, mode: 'dry-run' });
      const paused = await store.journal.setOperatorControl({ control: 'pause', instance: 'dca-a', on: true });
      await store.close();
      const since = new Date(paused.paused.get('dca-a') ?? 0).toISOString();
      renameSync(join(strategies, 'dca-a.env'), join(strategies, 'dca-a2.env'));

      const [warned, ...others] = warnings(await runOnce(strategies, dataDir, sandbox.url, ['dca-a2'], nowMs + 1_000));
      expect(others).toEqual([]);
      expect(warned).toMatchObject({ instance: 'dca-a', state: 'no-file', spent: [], unresolved: 0, pausedSince: since });
      expect(warned?.['msg']).toBe(
        `the journal holds instance dca-a, which has no file any more (${join(strategies, 'dca-a.env')}): it is paused from the status API since ${since}. ` +
          'Renamed? Its pause stays with dca-a: dca-a2, new to this journal, starts afresh, not paused, and buys at its first slot. To go on with its pause, name the file dca-a.env again, or pause the new name',
      );
      const checked = await runCli(['check', '--strategies', strategies, '--data-dir', dataDir], { ...ENV, STACKER_BASE_URL: sandbox.url });
      expect(checked.stdout).toContain(`: it is paused from the status API since ${since}. Renamed? Its pause stays with dca-a`);
    } finally {
      await sandbox.stop();
    }
  });

  it('names a disabled instance and an unresolved intent of one whose file is gone; a disabled one without a budget is not', async () => {
    const strategies = join(dir, 'disabled');
    const dataDir = join(dir, 'data-disabled');
    mkdirSync(strategies);
    writeFileSync(join(strategies, 'dca-a.env'), DCA_50_A_DAY);
    writeFileSync(join(strategies, 'quiet.env'), 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0005\n');
    const sandbox = await startSandbox();
    try {
      const nowMs = Date.now();
      await runOnce(strategies, dataDir, sandbox.url, ['dca-a', 'quiet'], nowMs);
      writeFileSync(join(strategies, 'dca-a.env'), `${DCA_50_A_DAY}ENABLED=false\n`);
      writeFileSync(join(strategies, 'quiet.env'), 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0005\nENABLED=false\n');
      writeFileSync(join(strategies, 'dca-b.env'), DCA_50_A_DAY);
      // A buy of `gone` whose answer was lost, its file since deleted.
      const store = await openStore({ dataDir, mode: 'dry-run' });
      await store.journal.claimSlot({ instance: 'gone', slotTimeMs: Math.floor(nowMs / 1000) * 1000, runId: null, intents: [{ index: 0, intent: { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.001') } }] });
      const [lost] = await store.journal.listIntents({ instance: 'gone' });
      await store.journal.updateIntent(lost?.intentId ?? '', { status: 'sent' });
      await store.journal.updateIntent(lost?.intentId ?? '', { status: 'unknown', error: { code: 'E_NETWORK', message: 'the answer was lost' } });
      await store.close();

      const found = warnings(await runOnce(strategies, dataDir, sandbox.url, ['dca-b'], nowMs + 1_000));
      // `quiet` bought too, but has no budget: nothing a new name could spend twice.
      expect(found.map((line) => [line['instance'], line['state'], line['unresolved']])).toEqual([
        ['dca-a', 'disabled', 0],
        ['gone', 'no-file', 1],
      ]);
      expect(String(found[0]?.['msg'])).toMatch(/^dca-a is disabled \(ENABLED=false in .*dca-a\.env\): it spent .* Its budget stays with dca-a: dca-b, new to this journal, starts afresh, .* To go on with its budget, enable dca-a again rather than a copy of it$/);
      expect(String(found[1]?.['msg'])).toContain(`: 1 intent(s) unresolved (${lost?.clientOrderId} buy-stock-market unknown), still looked up and counted under gone. Renamed?`);
    } finally {
      await sandbox.stop();
    }
  });
});

describe('the look for instances without a file at start', () => {
  it('reads the look-back’s orders a page at a time with their instance, never all of them at once (a per-minute schedule’s month is some 50k)', async () => {
    const { instancesWithoutFile } = await import('../../src/daemon/instances-without-file.ts');
    const { MemoryJournal } = await import('../../src/store/memory-journal.ts');
    const journal = new MemoryJournal({ clock: () => Date.UTC(2026, 10, 27) });
    await journal.open();
    const pages: number[] = [];
    const watched = {
      changedOrders: (query: Parameters<InstanceType<typeof MemoryJournal>['changedOrders']>[0]) => {
        pages.push(query.limit);
        return journal.changedOrders(query);
      },
      unresolvedIntents: () => journal.unresolvedIntents(),
      budgetReservation: (id: string) => journal.budgetReservation(id),
      budgetSpent: (...args: Parameters<InstanceType<typeof MemoryJournal>['budgetSpent']>) => journal.budgetSpent(...args),
      lastSlot: (instance: string) => journal.lastSlot(instance),
      scheduledSince: (instance: string) => journal.scheduledSince(instance),
      operatorControls: () => journal.operatorControls(),
    };
    expect(await instancesWithoutFile(watched, { instances: [], strategiesDir: dir }, Date.UTC(2026, 10, 27))).toEqual([]);
    expect(pages.length).toBeGreaterThan(0);
    for (const limit of pages) expect(limit).toBeLessThanOrEqual(2_000);
  });
});
