import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { loadDaemonConfig } from '../../src/config/daemon-config.ts';
import { runDaemon } from '../../src/daemon/daemon.ts';
import { INSTANT_TIMING } from '../../src/engine/runtime.ts';
import { VirtualClock } from '../../src/engine/schedule/clock.ts';
import { ApiMarketData } from '../../src/exchange/market-data.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { startSandbox } from '../../src/sandbox/server.ts';
import { PaperExchange } from '../../src/sim/paper-exchange.ts';
import { ConfigError } from '../../src/domain/errors.ts';
import { Decimal } from '../../src/domain/money.ts';
import { openStore } from '../../src/store/open-store.ts';
import { runCli } from '../cli/run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'stacker-once-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `run --once --instance dca-btc` in dry-run, its prices from the exchange at `url`, its log quiet. */
async function runOnce(config: Awaited<ReturnType<typeof loadDaemonConfig>>, url: string, clock: VirtualClock): ReturnType<typeof runDaemon> {
  const exchange = new PaperExchange({ marketData: new ApiMarketData(new ApiClient({ baseUrl: url })), wallet: config.dryRunWallet, slippagePct: config.dryRunSlippagePct, clock });
  return runDaemon({
    config,
    logger: await createLogger({ level: 'warn', destination: new Writable({ write: (_chunk, _encoding, done) => done() }) }),
    exchange,
    metrics: new Metrics({ mode: 'dry-run' }),
    clock,
    timing: INSTANT_TIMING,
    once: { instances: ['dca-btc'] },
  });
}

describe('run --once twice in the same second', () => {
  it('says of the second that the journal already had the slot and nothing was sent again', async () => {
    const strategies = join(dir, 'strategies');
    mkdirSync(strategies);
    writeFileSync(join(strategies, 'dca-btc.env'), 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\n');
    const config = await loadDaemonConfig({ strategiesDir: strategies, dataDir: join(dir, 'data') }, { env: { STACKER_DRY_RUN_WALLET: 'USDT=1000' } });
    const sandbox = await startSandbox();
    const clock = new VirtualClock(Date.UTC(2026, 10, 27, 9, 0, 0, 250));
    const once = () => runOnce(config, sandbox.url, clock);
    try {
      const first = await once();
      expect(first.slots).toEqual({ 'dca-btc': 'done' });
      expect(first.onceWhy?.['dca-btc']).toBeUndefined();
      const second = await once();
      expect(second.slots).toEqual({ 'dca-btc': 'already' });
      expect(second.onceWhy?.['dca-btc']).toBe('the journal already has this slot (a run in the same second, or the scheduled slot): nothing was sent again');
    } finally {
      await sandbox.stop();
    }
  });
});

describe('a start without the account of an intent still unsettled', () => {
  it('is refused naming the account and its intents: only its key could look them up', async () => {
    const strategies = join(dir, 'strategies-orphan');
    mkdirSync(strategies);
    writeFileSync(join(strategies, 'dca-btc.env'), 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\n');
    const dataDir = join(dir, 'data-orphan');
    // A buy sent on account kids, its answer lost, left unknown by the last run.
    const store = await openStore({ dataDir, mode: 'dry-run' });
    const slotTimeMs = Date.UTC(2026, 10, 27, 9);
    await store.journal.claimSlot({ instance: 'kids-btc', slotTimeMs, runId: null, intents: [{ index: 0, intent: { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.001') }, account: 'kids' }] });
    const [intent] = await store.journal.listIntents({ instance: 'kids-btc' });
    await store.journal.updateIntent(intent?.intentId ?? '', { status: 'sent' });
    await store.journal.updateIntent(intent?.intentId ?? '', { status: 'unknown', error: { code: 'E_NETWORK', message: 'the answer was lost' } });
    await store.close();

    const config = await loadDaemonConfig({ strategiesDir: strategies, dataDir }, { env: { STACKER_DRY_RUN_WALLET: 'USDT=1000' } });
    const sandbox = await startSandbox();
    try {
      const error = await runOnce(config, sandbox.url, new VirtualClock(slotTimeMs + 3_600_000)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toEqual([
        {
          field: 'STACKER_ACCOUNT_kids_API_KEY',
          rule: expect.stringMatching(new RegExp(`^account kids has 1 intent\\(s\\) sent and not settled \\(${intent?.intentId} buy-stock-market unknown\\), and only its key can look an order up: keep the account .*ENABLED=false will do.*stacker journal resolve`)),
        },
      ]);
      // check says what run would: refused, exit 2.
      const checked = await runCli(['check', '--strategies', strategies, '--data-dir', dataDir], { STACKER_BASE_URL: sandbox.url, STACKER_DRY_RUN_WALLET: 'USDT=1000' });
      expect(checked.code, checked.stderr).toBe(2);
      expect(checked.stderr).toContain('account kids has 1 intent(s) sent and not settled');
    } finally {
      await sandbox.stop();
    }
  });
});
