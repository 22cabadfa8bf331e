import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadStrategyFiles } from '../../src/config/daemon-config.ts';
import { DEMO_MARKETS } from '../../src/sim/seed.ts';
import { STRATEGIES } from '../../strategies/index.ts';
import { runCli } from './run-cli.ts';
import { notListed } from '../../src/config/instance-runtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'stacker-strategies-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('stacker strategies', () => {
  it('lists every shipped strategy with the keys it declares, on contract 2', async () => {
    const result = await runCli(['strategies', '--json']);
    expect(result.code).toBe(0);
    const listed = JSON.parse(result.stdout) as { apiVersion: number; strategies: Array<{ name: string; params: Array<{ key: string; rule: string }> }> };
    expect(listed.apiVersion).toBe(2);
    expect(listed.strategies.map((s) => s.name)).toEqual([...STRATEGIES.keys()]);
    for (const strategy of listed.strategies) {
      expect(strategy.params.map((p) => p.key)).toEqual(STRATEGIES.get(strategy.name)?.params.map((p) => p.key));
    }
  });

  it.each([...STRATEGIES.keys()])('describe %s prints an example file that loads and passes its start checks on the demo markets, and shows every key', async (name) => {
    const result = await runCli(['strategies', 'describe', name]);
    expect(result.code).toBe(0);
    const file = join(dir, `${name}-example.env`);
    writeFileSync(file, result.stdout);
    const [instance] = await loadStrategyFiles([file]);
    const strategy = STRATEGIES.get(name);
    if (instance === undefined || strategy === undefined) throw new Error(`${name} did not load`);
    const names = DEMO_MARKETS.map((r) => r.name);
    const context = { market: (m: string) => DEMO_MARKETS.find((r) => r.name === m), marketNames: () => names, unlisted: (m: string) => notListed(m, names) };
    expect(strategy.checkParams?.(instance.params, context, file) ?? []).toEqual([]);
    for (const spec of strategy.params) expect(result.stdout).toMatch(new RegExp(`^(# )?${spec.key}[ =(]`, 'm'));
  });

  it('refuses a name it does not know, listing the ones it has (exit 2)', async () => {
    const result = await runCli(['strategies', 'describe', 'nope']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('"nope" is not a strategy; the strategies are dca');
    expect(result.stdout).toBe('');
  });
});
