import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadDaemonConfig, loadStrategyFiles } from '../../src/config/daemon-config.ts';
import { KNOWN_ENV_KEYS } from '../../src/config/daemon-env.ts';
import { COMMON_PARAMS } from '../../src/engine/contract.ts';
import { STRATEGIES } from '../../strategies/index.ts';

/** The examples users copy are the first thing they run: they must pass the checks they describe. */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENV_EXAMPLE = `${ROOT}.env.example`;
const STRATEGIES_DIR = `${ROOT}config/strategies`;

/** Keys set or shown commented out (`# KEY=value`) in a dotenv file. */
function documentedKeys(text: string): Set<string> {
  return new Set([...text.matchAll(/^#?\s?([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1] as string));
}

describe('the shipped examples', () => {
  it('.env.example with config/strategies loads without a single problem, in dry-run', async () => {
    const config = await loadDaemonConfig({ envFile: ENV_EXAMPLE, strategiesDir: STRATEGIES_DIR }, { env: {} });
    expect(config.mode).toBe('dry-run');
    expect(config.instances.map((i) => i.instance)).toEqual(['balance-report', 'dca-btc', 'flex-sweep-usdt', 'top-up-usdt', 'value-avg-btc']);
    expect([...config.dryRunWallet.keys()]).toEqual(['USDT', 'BTC']);
  });

  it('.env.example documents every STACKER_ setting stacker reads, and nothing else', () => {
    const keys = documentedKeys(readFileSync(ENV_EXAMPLE, 'utf8'));
    expect([...keys].sort()).toEqual([...KNOWN_ENV_KEYS].sort());
  });

  it('each example instance file loads on its own, and every key it shows (set or commented) is one its strategy or the engine reads', async () => {
    const files = readdirSync(STRATEGIES_DIR).filter((name) => name.endsWith('.env'));
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const name of files) {
      const path = `${STRATEGIES_DIR}/${name}`;
      const [instance] = await loadStrategyFiles([path]);
      const strategy = STRATEGIES.get(instance?.strategy.name ?? '');
      const known = new Set([...COMMON_PARAMS, ...(strategy?.params ?? [])].map((spec) => spec.key));
      const unknown = [...documentedKeys(readFileSync(path, 'utf8'))].filter((key) => !known.has(key));
      expect(unknown, name).toEqual([]);
    }
  });

  it('there is an example instance file for every shipped strategy', async () => {
    const files = readdirSync(STRATEGIES_DIR)
      .filter((name) => name.endsWith('.env'))
      .map((name) => `${STRATEGIES_DIR}/${name}`);
    const used = new Set((await loadStrategyFiles(files)).map((instance) => instance.strategy.name));
    expect([...used].sort()).toEqual([...STRATEGIES.keys()].sort());
  });
});
