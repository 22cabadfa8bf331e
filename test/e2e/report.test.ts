import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Decimal } from '../../src/domain/money.ts';
import { runCli } from '../cli/run-cli.ts';
import { expectedPosition } from './report-expect.ts';
import { sandboxPerTest, startDaemon } from './daemon-process.ts';

// `stacker report`: the journal's cost basis, checked against the exchange's own history.
const t = sandboxPerTest();

describe('stacker report', () => {
  it('agrees with the exchange history to the last decimal: bought, spent, fees, average cost with fees, value and P&L at the last price', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 9 * * 1', MARKET: 'BTC_USDT', AMOUNT: '0.00123' });
    t.dir.writeStrategy('dca-eth', { STRATEGY: 'dca', SCHEDULE: '0 9 * * 1', MARKET: 'ETH_USDT', AMOUNT: '0.0456' });
    for (let i = 0; i < 2; i++) expect(await startDaemon(['--strategies', t.dir.strategies, '--data-dir', t.dir.data, '--live', '--once'], t.live()).exited).toBe(0);
    const history = t.sandbox.exchange.orderHistory({});
    expect(history.length).toBeGreaterThanOrEqual(2);

    const result = await runCli(['report', '--mode', 'live', '--data-dir', t.dir.data, '--json'], t.live());
    expect(result.code).toBe(0);
    const { markets } = JSON.parse(result.stdout) as { markets: Array<Record<string, unknown>> };
    for (const market of ['BTC_USDT', 'ETH_USDT']) {
      expect(markets.find((m) => m['market'] === market)).toEqual(expectedPosition(history, market, t.sandbox.exchange.price(market) as Decimal));
    }

    const csv = await runCli(['report', '--mode', 'live', '--data-dir', t.dir.data, '--csv'], t.live());
    expect(csv.code).toBe(0);
    const lines = csv.stdout.trim().split('\n');
    expect(lines[0]).toBe('time,market,side,base,quote,price,fee,fee_asset,order_id,client_order_id');
    expect(lines.slice(1).map((line) => line.split(',')[8]).sort()).toEqual(history.map((o) => o.orderId).sort());

    const only = await runCli(['report', '--mode', 'live', '--data-dir', t.dir.data, '--instance', 'dca-eth', '--json'], t.live());
    expect((JSON.parse(only.stdout) as { markets: Array<{ market: string }> }).markets.map((m) => m.market)).toEqual(['ETH_USDT']);
  }, 60_000);

  it('--from/--to keep the orders the exchange took in that period (a date is a whole UTC day), and refuse a period that ends before it starts', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 9 * * 1', MARKET: 'BTC_USDT', AMOUNT: '0.00123' });
    expect(await startDaemon(['--strategies', t.dir.strategies, '--data-dir', t.dir.data, '--live', '--once'], t.live()).exited).toBe(0);
    const history = t.sandbox.exchange.orderHistory({});
    expect(history).toHaveLength(1);
    const day = (offsetDays: number): string => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
    const report = (...period: string[]) => runCli(['report', '--mode', 'live', '--data-dir', t.dir.data, '--json', ...period], t.live());
    const today = JSON.parse((await report('--from', day(0), '--to', day(0))).stdout) as { from: string; to: string; markets: Array<{ orders: number }> };
    expect(today).toMatchObject({ from: `${day(0)}T00:00:00.000Z`, to: `${day(0)}T23:59:59.999Z`, markets: [{ orders: 1 }] });
    expect((JSON.parse((await report('--from', day(1))).stdout) as { markets: unknown[] }).markets).toEqual([]);
    expect((JSON.parse((await report('--to', day(-1))).stdout) as { markets: unknown[] }).markets).toEqual([]);
    const csv = await runCli(['report', '--mode', 'live', '--data-dir', t.dir.data, '--csv', '--from', day(1)], t.live());
    expect(csv.stdout.trim().split('\n')).toHaveLength(1);
    const text = await runCli(['report', '--mode', 'live', '--data-dir', t.dir.data, '--to', day(-1)], t.live());
    expect([text.code, text.stderr]).toEqual([0, expect.stringContaining(`nothing bought through ${day(-1)}T23:59:59.999Z`)]);
    const backwards = await report('--from', day(0), '--to', day(-1));
    expect([backwards.code, JSON.parse(backwards.stdout || backwards.stderr)]).toEqual([2, { error: { code: 'E_INPUT', problems: [{ field: '--from', rule: 'must not be after --to' }] } }]);
    const compact = await runCli(['report', '--mode', 'live', '--data-dir', t.dir.data, '--from', '20250101'], t.live());
    expect([compact.code, compact.stderr]).toEqual([2, expect.stringContaining('write the date with dashes, 2025-01-01')]);
  }, 60_000);

  it('says which journal is missing instead of failing (exit 2)', async () => {
    mkdirSync(t.dir.data, { recursive: true });
    const result = await runCli(['report', '--mode', 'live', '--data-dir', t.dir.data]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no live journal at');
  });
});

describe('stacker report --html', () => {
  it("writes a page of the live journal readable by its owner only (0600, as the journal), under umask 022 and over an older page readable by all", async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 9 * * 1', MARKET: 'BTC_USDT', AMOUNT: '0.00123' });
    expect(await startDaemon(['--strategies', t.dir.strategies, '--data-dir', t.dir.data, '--live', '--once'], t.live()).exited).toBe(0);
    const fresh = join(t.dir.root, 'report.html');
    const older = join(t.dir.root, 'older.html');
    const umask = process.umask(0o022);
    try {
      expect((await runCli(['report', '--mode', 'live', '--data-dir', t.dir.data, '--html', fresh], t.live())).code).toBe(0);
      writeFileSync(older, '', { mode: 0o644 });
      chmodSync(older, 0o644);
      expect((await runCli(['report', '--mode', 'live', '--data-dir', t.dir.data, '--html', older], t.live())).code).toBe(0);
    } finally {
      process.umask(umask);
    }
    for (const page of [fresh, older]) {
      expect(readFileSync(page, 'utf8')).toContain('BTC_USDT');
      expect((statSync(page).mode & 0o777).toString(8)).toBe('600');
    }
  }, 60_000);
});
