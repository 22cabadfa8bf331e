import { describe, expect, it } from 'vitest';
import type { CodeRecord } from '../../src/domain/account.ts';
import { Decimal } from '../../src/domain/money.ts';
import { type Intent, intentProblems, readsOf } from '../../src/engine/contract.ts';
import { parseInstanceParams } from '../../src/engine/params.ts';
import { balanceReport } from '../../strategies/balance-report.ts';
import { type ViewSpec, asJson, slotView } from './view.ts';

const SOURCE = 'config/strategies/balance-report.env';

function code(n: number, ticker = 'USDT'): CodeRecord {
  return {
    amount: new Decimal('10.5'),
    code: `WBe11f4fce-${String(n).padStart(4, '0')}-SECRET-CODE-VALUE-${n}`,
    dateSec: 1_714_550_400,
    status: 'Activated',
    ticker,
    externalId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  };
}

async function decide(env: Record<string, string>, spec: ViewSpec): Promise<readonly Intent[]> {
  const params = parseInstanceParams(balanceReport, { STRATEGY: 'balance-report', SCHEDULE: '0 * * * *', ...env }, SOURCE);
  const intents = await balanceReport.decide(slotView({ ...spec, reads: readsOf(balanceReport, params) }), params);
  for (const intent of intents) expect(intentProblems(intent)).toEqual([]);
  return intents;
}

const ACCOUNT: ViewSpec = {
  main: { USDT: '120.5', BTC: '0', ETH: '0' },
  trade: { USDT: { available: '30', freeze: '5.25' }, BTC: { available: '0.0015' } },
  codes: [code(1), code(2), code(3, 'BTC')],
};

describe('balance-report', () => {
  it('notes every asset with a balance, sorted, with main and trade amounts as decimal strings', async () => {
    const intents = await decide({ CODES: 'false' }, ACCOUNT);
    expect(intents).toEqual([
      expect.objectContaining({ kind: 'note', data: { ticker: 'BTC', main: '0', tradeAvailable: '0.0015', tradeFreeze: '0' } }),
      expect.objectContaining({ kind: 'note', data: { ticker: 'USDT', main: '120.5', tradeAvailable: '30', tradeFreeze: '5.25' } }),
    ]);
  });

  it('reports exactly the TICKERS asked for, zero balances included, and only their codes', async () => {
    const intents = await decide({ TICKERS: 'ETH, BTC' }, ACCOUNT);
    expect(intents.map((i) => (i.kind === 'note' ? i.message : i.kind))).toEqual([
      'balance ETH: main 0, trade 0 available + 0 in orders',
      'balance BTC: main 0, trade 0.0015 available + 0 in orders',
      'codes: 1',
      'codes BTC Activated: 1 code, 10.5',
      'codes 1-1 of 1',
    ]);
  });

  it('masks every code: the raw code appears nowhere in the intents', async () => {
    const intents = await decide({}, ACCOUNT);
    const json = asJson(intents);
    for (const c of ACCOUNT.codes ?? []) {
      expect(json).not.toContain(c.code);
      expect(json).not.toContain(c.code.slice(4, -4));
    }
    expect(json).toContain('WBe1');
    expect(json).toContain('USDT Activated');
  });

  it('names its log fields the same whatever the account holds: assets, statuses and codes are values, never field names', async () => {
    const fieldsOf = (intents: readonly Intent[]): string[] => [...new Set(intents.flatMap((i) => (i.kind === 'note' ? [Object.keys(i.data ?? {}).join(',')] : [])))].sort();
    const small = await decide({ CODES_PER_NOTE: '2' }, { main: { USDT: '1' }, codes: [code(1)] });
    const large = await decide(
      { CODES_PER_NOTE: '2' },
      { main: { USDT: '1', BTC: '2' }, trade: { ETH: { available: '3' } }, codes: [...Array.from({ length: 7 }, (_, i) => code(i + 1, i % 2 === 0 ? 'USDT' : 'BTC')), { ...code(8), status: 'Used' }] },
    );
    expect(fieldsOf(large)).toEqual(fieldsOf(small));
    expect(fieldsOf(large)).toEqual(['count', 'first,last,total,codes', 'ticker,main,tradeAvailable,tradeFreeze', 'ticker,status,count,amount']);
  });

  it('summarises codes per asset and status and lists them in pages of CODES_PER_NOTE', async () => {
    const codes = Array.from({ length: 5 }, (_, i) => code(i + 1));
    const intents = await decide({ CODES_PER_NOTE: '2' }, { main: { USDT: '1' }, codes });
    const notes = intents.filter((i) => i.kind === 'note');
    expect(notes.map((n) => n.message)).toEqual([
      'balance USDT: main 1, trade 0 available + 0 in orders',
      'codes: 5',
      'codes USDT Activated: 5 codes, 52.5',
      'codes 1-2 of 5',
      'codes 3-4 of 5',
      'codes 5-5 of 5',
    ]);
    expect(notes[1]?.data).toEqual({ count: '5' });
    expect(notes[2]?.data).toEqual({ ticker: 'USDT', status: 'Activated', count: '5', amount: '52.5' });
    expect(notes[3]?.data).toMatchObject({ first: '1', last: '2', total: '5' });
    expect(notes[3]?.data?.['codes']?.split('; ')).toHaveLength(2);
    expect(notes[5]?.data).toMatchObject({ first: '5', last: '5', total: '5' });
    expect(notes[5]?.data?.['codes']).toMatch(/^WBe1\*+UE-5 10\.5 USDT Activated 2024-05-01T08:00:00\.000Z id 00000000-0000-4000-8000-000000000005$/);
  });

  it('asks the engine for codes only when CODES is true', () => {
    expect(readsOf(balanceReport, balanceReport.parseParams({}, SOURCE))).toEqual(['balances', 'codes']);
    expect(readsOf(balanceReport, balanceReport.parseParams({ CODES: 'false' }, SOURCE))).toEqual(['balances']);
  });

  it('says so when the account holds nothing', async () => {
    const intents = await decide({ CODES: 'false' }, {});
    expect(intents).toEqual([expect.objectContaining({ kind: 'note', message: 'no balances' })]);
  });
});
