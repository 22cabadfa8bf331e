import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/money.ts';
import { SCHEMA_VERSION } from '../../src/store/migrations.ts';
import { SLOT, TempWorld, claimWithBuy, order } from './helpers.ts';

const probe = spawnSync('sqlite3', ['-version'], { encoding: 'utf8' });
const hasSqlite3 = probe.status === 0;
const skipped = hasSqlite3 ? '' : ' (skipped: the sqlite3 shell is not installed)';

let world: TempWorld;
beforeEach(() => {
  world = new TempWorld();
});
afterEach(async () => {
  await world.cleanup();
});

function shell(sql: string): string {
  const result = spawnSync('sqlite3', ['-readonly', '-bail', '-separator', '|', world.path(), sql], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`sqlite3 failed: ${result.stderr}`);
  return result.stdout.trim();
}

describe('the journal file in a plain sqlite3 shell', () => {
  it.skipIf(!hasSqlite3)(`reads intents, orders and transitions while the journal is open, and after it is closed${skipped}`, async () => {
    const journal = await world.opened();
    const intentId = await claimWithBuy(journal, '0.0005');
    await journal.recordOrderSnapshot(order({ clientOrderId: (await journal.getIntent(intentId))?.clientOrderId ?? '', status: 'FILLED', filledBase: new Decimal('0.0005'), filledQuote: new Decimal('48.5'), fee: new Decimal('0.0485') }));

    const query = `SELECT i.instance, i.kind, json_extract(i.params, '$.amount'), i.status, o.status, t.to_status, t.filled_quote, t.fee
      FROM intents i JOIN orders o ON o.intent_id = i.intent_id JOIN order_transitions t ON t.order_id = o.order_id`;
    const expected = `${SLOT.instance}|buy-stock-market|0.0005|pending|FILLED|FILLED|48.5|0.0485`;
    expect(shell(query)).toBe(expected);
    await journal.close();
    expect(shell(query)).toBe(expected);
    expect(shell('SELECT max(version) FROM schema_migrations')).toBe(String(SCHEMA_VERSION));
  });
});
