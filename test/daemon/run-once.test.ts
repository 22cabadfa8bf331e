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

const dir = mkdtempSync(join(tmpdir(), 'stacker-once-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('run --once twice in the same second', () => {
  it('says of the second that the journal already had the slot and nothing was sent again', async () => {
    const strategies = join(dir, 'strategies');
    mkdirSync(strategies);
    writeFileSync(join(strategies, 'dca-btc.env'), 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\n');
    const config = await loadDaemonConfig({ strategiesDir: strategies, dataDir: join(dir, 'data') }, { env: { STACKER_DRY_RUN_WALLET: 'USDT=1000' } });
    const sandbox = await startSandbox();
    const clock = new VirtualClock(Date.UTC(2026, 10, 27, 9, 0, 0, 250));
    const once = async () => {
      const exchange = new PaperExchange({ marketData: new ApiMarketData(new ApiClient({ baseUrl: sandbox.url })), wallet: config.dryRunWallet, slippagePct: config.dryRunSlippagePct, clock });
      return runDaemon({
        config,
        logger: await createLogger({ level: 'warn', destination: new Writable({ write: (_chunk, _encoding, done) => done() }) }),
        exchange,
        metrics: new Metrics({ mode: 'dry-run' }),
        clock,
        timing: INSTANT_TIMING,
        once: { instances: ['dca-btc'] },
      });
    };
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
