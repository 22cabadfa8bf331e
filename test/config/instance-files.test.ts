import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadDaemonConfig, loadStrategyFiles } from '../../src/config/daemon-config.ts';
import { EXIT, exitCodeFor } from '../../src/domain/errors.ts';
import { STRATEGY_API_CHANGES, type Strategy } from '../../src/engine/contract.ts';
import { STRATEGIES } from '../../strategies/index.ts';
import { ConfigWorld, DCA, REPORT, about, configErrorOf, lines } from './helpers.ts';

let world: ConfigWorld;
beforeEach(() => {
  world = new ConfigWorld();
});
afterEach(() => world.cleanup());

const SECRET = 'sk_live_0123456789abcdef_SECRET';

describe('loadDaemonConfig: every problem at once', () => {
  it('reports every problem of every file at once, each naming the file, the key and the rule', async () => {
    const a = world.instance('a-dca', ['STRATEGY=dca', 'SCHEDULE="0 9 * *"', 'MARKET=btc_usdt', 'AMOUNT=1e-3', 'AMOUTN=1'].join('\n'));
    const b = world.instance('b-sweep', ['STRATEGY=flex-sweep', 'SCHEDULE="30 8 * * *"', 'TIMEZONE=Mars/Olympus', 'TICKER=USDT', 'MODE=half'].join('\n'));
    const c = world.instance('c-nothing', 'SCHEDULE="0 0 * * *"\nCATCH_UP=sometimes\n');
    const envFile = world.file('.env', 'STACKER_METRICS_PORT=http\nSTACKER_DRY_RUN_WALLET=USDT=lots\n');
    const error = await configErrorOf(loadDaemonConfig({ envFile, strategiesDir: world.strategiesDir }, { env: {} }));
    const fields = error.problems.map((p) => `${p.source}|${p.field}`);
    expect(fields).toEqual(
      expect.arrayContaining([
        `env file ${envFile}|STACKER_METRICS_PORT`,
        `env file ${envFile}|STACKER_DRY_RUN_WALLET`,
        `${a}|SCHEDULE`,
        `${a}|MARKET`,
        `${a}|AMOUNT`,
        `${a}|AMOUTN`,
        `${b}|TIMEZONE`,
        `${b}|MODE`,
        `${c}|STRATEGY`,
        `${c}|CATCH_UP`,
      ]),
    );
    expect(error.problems).toHaveLength(10);
    expect(exitCodeFor(error)).toBe(EXIT.badInput);
  });

  it('refuses a key given twice in an instance file, naming the file, the key and both lines', async () => {
    const file = world.instance('twice', ['STRATEGY=dca', 'SCHEDULE="0 9 * * *"', 'MARKET=BTC_USDT', 'AMOUNT=0.0005', '', 'AMOUNT=5'].join('\n'));
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(error.problems).toEqual([{ source: file, field: 'AMOUNT', rule: 'is set on lines 4 and 6; dotenv would keep the last one without a word, so say it once' }]);
  });

  it('names a missing STRATEGY with the registered ones, and suggests the closest to an unknown one', async () => {
    const missing = world.instance('missing', 'SCHEDULE="0 9 * * *"');
    const typo = world.instance('typo', 'STRATEGY=dcaa\nSCHEDULE="0 9 * * *"');
    const capitals = world.instance('capitals', 'STRATEGY=Flex-Sweep\nSCHEDULE="0 9 * * *"');
    const unknown = world.instance('unknown', 'STRATEGY=grid\nSCHEDULE="0 9 * * *"');
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(about(error, missing, 'STRATEGY').map((p) => p.rule)).toEqual(['is required: the strategy this instance runs, one of dca, flex-sweep, balance-report, top-up, value-avg']);
    expect(about(error, typo, 'STRATEGY').map((p) => p.rule)).toEqual(['"dcaa" is not a known strategy; did you mean dca?']);
    expect(about(error, capitals, 'STRATEGY').map((p) => p.rule)).toEqual(['"Flex-Sweep" is not a known strategy; did you mean flex-sweep?']);
    expect(about(error, unknown, 'STRATEGY').map((p) => p.rule)).toEqual(['"grid" is not a known strategy; the strategies are dca, flex-sweep, balance-report, top-up, value-avg']);
  });

  it('reports a bad cron expression under SCHEDULE and a bad time zone under TIMEZONE, even when SCHEDULE is missing', async () => {
    const cron = world.instance('cron', 'STRATEGY=balance-report\nSCHEDULE="every day"');
    const zone = world.instance('zone', 'STRATEGY=balance-report\nTIMEZONE=Europe/Atlantis');
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(about(error, cron, 'SCHEDULE')).toHaveLength(1);
    expect(about(error, zone, 'SCHEDULE').map((p) => p.rule)[0]).toMatch(/^is required/);
    expect(about(error, zone, 'TIMEZONE')).toHaveLength(1);
    expect(about(error, zone, 'TIMEZONE')[0]?.rule).toContain('Europe/Atlantis');
  });

  it('refuses keys neither the strategy nor the engine knows, suggesting the one meant', async () => {
    const file = world.instance('dca-btc', `${DCA}\nAMOUTN=0.001\nBUDGET_PER_WEEK=10\nCOLOUR=blue`);
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(about(error, file, 'AMOUTN')[0]?.rule).toMatch(/did you mean AMOUNT\?$/);
    expect(about(error, file, 'COLOUR')[0]?.rule).toMatch(/^is not a key of strategy dca or of the engine; the keys are STRATEGY, SCHEDULE/);
    expect(about(error, file, 'BUDGET_PER_WEEK')).toHaveLength(1);
    expect(error.message).not.toContain('blue');
  });

  it("passes the strategy's own parseParams problems through, with every other problem of the file", async () => {
    const file = world.instance('sweep', 'STRATEGY=flex-sweep\nSCHEDULE="0 9 * * *"\nPLAN=not-a-uuid\nTICKER=USDT\nMODE=reserve\nENABLED=maybe');
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(error.problems.map((p) => p.field).sort()).toEqual(['ENABLED', 'PLAN', 'PLAN', 'RESERVE'].sort());
    expect(error.problems.every((p) => p.source === file)).toBe(true);
  });

  it('requires budgets and MAX_ORDER_QUOTE to be plain decimals greater than zero', async () => {
    const file = world.instance(
      'dca-btc',
      `${DCA}\nBUDGET_QUOTE_PER_DAY=0\nBUDGET_QUOTE_PER_WEEK=1e3\nBUDGET_QUOTE_PER_MONTH=-5\nMAX_ORDER_QUOTE=fifty`,
    );
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(lines(error.problems)).toEqual([
      `${file}: BUDGET_QUOTE_PER_DAY: must be greater than 0 (got 0)`,
      `${file}: BUDGET_QUOTE_PER_WEEK: must be a plain decimal number such as 0.0005, without exponent, plus sign or blanks (got "1e3")`,
      `${file}: BUDGET_QUOTE_PER_MONTH: must be greater than 0 (got -5)`,
      `${file}: MAX_ORDER_QUOTE: must be a plain decimal number such as 0.0005, without exponent, plus sign or blanks (got "fifty")`,
    ]);
  });

  it('refuses a budget or order limit on a strategy that places no orders', async () => {
    const file = world.instance('report', `${REPORT}\nBUDGET_QUOTE_PER_WEEK=100\nMAX_ORDER_QUOTE=10`);
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(lines(error.problems)).toEqual([
      `${file}: BUDGET_QUOTE_PER_WEEK: strategy balance-report declares no budgetAsset (it places no orders, or its author left budgetAsset out), so a budget or order limit has nothing to count in; remove the key`,
      `${file}: MAX_ORDER_QUOTE: strategy balance-report declares no budgetAsset (it places no orders, or its author left budgetAsset out), so a budget or order limit has nothing to count in; remove the key`,
    ]);
  });

  it('checks CATCH_UP and CATCH_UP_WINDOW, the window even while CATCH_UP=skip', async () => {
    const bad = world.instance('bad', `${REPORT}\nCATCH_UP=all\nCATCH_UP_WINDOW=soon`);
    const zero = world.instance('zero', `${REPORT}\nCATCH_UP=last\nCATCH_UP_WINDOW=0m`);
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(about(error, bad, 'CATCH_UP').map((p) => p.rule)).toEqual(['must be one of skip, last (got "all")']);
    expect(about(error, bad, 'CATCH_UP_WINDOW')[0]?.rule).toContain('(got "soon")');
    expect(about(error, zero, 'CATCH_UP_WINDOW')[0]?.rule).toMatch(/^must be a duration greater than zero/);
  });

  it('reports a line dotenv would skip (no "="), by number and without its text', async () => {
    const file = world.instance('dca-btc', `${DCA}\nALLOW_TRANSFER true\n# a comment\n\n  export STP=cancel_new`);
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(lines(error.problems)).toEqual([`${file}: line 5: is not KEY=value, a comment or blank, so dotenv skips it (a missing "="?)`]);
  });

  it('refuses a value dotenv would cut at a "#" glued to it, by key and line', async () => {
    const file = world.instance('dca-btc', `${DCA}\nCLIENT_ORDER_ID_PREFIX=dca#1`);
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(lines(error.problems)).toContainEqual(expect.stringMatching(new RegExp(`^${file.replace(/[.*+?^\${}()|[\]\\]/g, '\\$&')}: CLIENT_ORDER_ID_PREFIX: holds a "#" right after other characters \\(line \\d+\\)`)));
  });

  it('accepts dotenv multi-line quoted values without calling their lines malformed', async () => {
    world.instance('report', `${REPORT}\nTICKERS="USDT,\n  BTC"\nCODES=false`);
    const [instance] = (await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} })).instances;
    expect(instance?.params).toEqual({ TICKERS: ['USDT', 'BTC'], CODES: false, CODES_PER_NOTE: 50 });
  });

  it('tells where a global setting found in a strategy file belongs, without echoing its value', async () => {
    const file = world.instance('dca-btc', `${DCA}\nSTACKER_API_SECRET=${SECRET}`);
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(lines(error.problems)).toEqual([
      `${file}: STACKER_API_SECRET: is a global setting: set it in the environment or the --env-file file, not in a strategy instance file`,
    ]);
    expect(error.message).not.toContain(SECRET);
  });

  it('refuses two instance files with the same name (case-insensitively), naming both', async () => {
    const first = world.instance('dca-btc', DCA);
    const second = world.file('other/DCA-btc.env', DCA);
    const error = await configErrorOf(loadStrategyFiles([first, second]));
    expect(lines(error.problems)).toEqual([
      `${second}: file name: instance name DCA-btc is already used by ${first}; each instance needs its own file name (it owns a journal, budgets and order ids)`,
    ]);
  });

  it('refuses an instance file name that cannot name an instance', async () => {
    const file = world.instance('dca btc', DCA);
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(about(error, file, 'file name')).toHaveLength(1);
  });

  it('refuses a folder named like an instance file instead of skipping it: the instance the operator expects would never run', async () => {
    world.instance('dca-btc', DCA);
    mkdirSync(join(world.strategiesDir, 'dca-eth.env'));
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(lines(error.problems)).toEqual([`--strategies: ${join(world.strategiesDir, 'dca-eth.env')} is not a file (a folder, or a link to one): an instance is a NAME.env file`]);
  });

  it('refuses an instance file whose .env is in capitals, and leaves backups, hidden files and notes alone', async () => {
    world.instance('dca-btc', DCA);
    for (const name of ['dca-eth.ENV', 'dca-btc.env.bak', 'dca-btc.env~', '.hidden.env', 'notes.txt']) writeFileSync(join(world.strategiesDir, name), DCA);
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(lines(error.problems)).toEqual([`--strategies: ${join(world.strategiesDir, 'dca-eth.ENV')} is not read: instance files end in .env in lower case; rename it dca-eth.env`]);
  });

  it('refuses an empty strategies folder and a missing one, naming where the folder came from', async () => {
    const empty = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(lines(empty.problems)).toEqual([`--strategies: the strategies folder ${world.strategiesDir} holds no instance file (NAME.env), so there is nothing to run`]);

    const missing = join(world.dir, 'nope');
    const fromEnv = await configErrorOf(loadDaemonConfig({}, { env: { STACKER_STRATEGIES_DIR: missing } }));
    expect(lines(fromEnv.problems)).toEqual([
      `environment: STACKER_STRATEGIES_DIR: strategies folder not found: ${missing}; it should hold one NAME.env file per strategy instance (examples: config/strategies/ in the stacker repository)`,
    ]);
  });

  it('says a default folder is the default, and how to choose another', async () => {
    const cwd = process.cwd();
    process.chdir(world.dir);
    try {
      const error = await configErrorOf(loadDaemonConfig({}, { env: {} }));
      expect(lines(error.problems)).toEqual([
        '--strategies: strategies folder not found: config/strategies; it should hold one NAME.env file per strategy instance (examples: config/strategies/ in the stacker repository) (the default; give --strategies or set STACKER_STRATEGIES_DIR to choose another)',
      ]);
    } finally {
      process.chdir(cwd);
    }
  });

  it('refuses a data dir that is a file', async () => {
    world.instance('dca-btc', DCA);
    const file = world.file('data', 'not a folder');
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir, dataDir: file }, { env: {} }));
    expect(lines(error.problems)).toEqual([`--data-dir: is not a folder: ${file}`]);
  });

  it('names the bad pair of a paper wallet', async () => {
    world.instance('dca-btc', DCA);
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_DRY_RUN_WALLET: 'USDT=1000,btc=1,ETH,USDT=2,,XRP=-1' } }));
    expect(lines(error.problems)).toEqual([
      'environment: STACKER_DRY_RUN_WALLET: pair "btc=1": the ticker must be capitals and digits such as USDT (write it in capitals: BTC)',
      'environment: STACKER_DRY_RUN_WALLET: pair "ETH" has no "="; write TICKER=amount such as USDT=1000',
      'environment: STACKER_DRY_RUN_WALLET: pair "USDT=2": USDT is given twice',
      'environment: STACKER_DRY_RUN_WALLET: pair 5 is empty (a doubled or trailing comma?); write TICKER=amount pairs such as USDT=1000,BTC=0',
      'environment: STACKER_DRY_RUN_WALLET: pair "XRP=-1": the amount must be a plain decimal ≥ 0 such as 1000 or 0.5, without exponent or sign',
    ]);
  });

  it('checks the metrics port and host, the slippage and the kill switch', async () => {
    world.instance('dca-btc', DCA);
    const env = { STACKER_METRICS_PORT: '70000', STACKER_METRICS_HOST: 'not a host', STACKER_METRICS_ALLOWED_HOSTS: 'localhost:9464', STACKER_METRICS_TRUSTED_PROXIES: '127.0.0.1,proxy.lan', STACKER_DRY_RUN_SLIPPAGE_PCT: '75', STACKER_KILL_SWITCH: 'on' };
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env }));
    expect(error.problems.map((p) => p.field)).toEqual(['STACKER_METRICS_PORT', 'STACKER_METRICS_HOST', 'STACKER_METRICS_ALLOWED_HOSTS', 'STACKER_METRICS_TRUSTED_PROXIES', 'STACKER_DRY_RUN_SLIPPAGE_PCT', 'STACKER_KILL_SWITCH']);
    expect(error.problems.find((p) => p.field === 'STACKER_METRICS_TRUSTED_PROXIES')?.rule).toContain('IP addresses of your reverse proxies');
    expect(error.problems.every((p) => p.source === 'environment')).toBe(true);
  });

  it('accepts 0 as the metrics port (a free one) and 1 or 0 for the kill switch', async () => {
    world.instance('dca-btc', DCA);
    const on = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_METRICS_PORT: '0', STACKER_KILL_SWITCH: '1' } });
    expect(on).toMatchObject({ metricsPort: 0, killSwitchEnv: true });
    const off = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_KILL_SWITCH: 'FALSE' } });
    expect(off.killSwitchEnv).toBe(false);
  });

  it('merges the settings problems (endpoint, log level) with the rest', async () => {
    world.instance('dca-btc', 'STRATEGY=dca');
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir, baseUrl: 'ftp://x' }, { env: { STACKER_LOG_LEVEL: 'loud' } }));
    expect(error.problems.map((p) => p.field)).toEqual(['--base-url', 'STACKER_LOG_LEVEL', 'SCHEDULE', 'MARKET', 'AMOUNT']);
  });

  it('reports a missing env file and still checks the instance files', async () => {
    const file = world.instance('dca-btc', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT');
    const missing = join(world.dir, 'missing.env');
    const error = await configErrorOf(loadDaemonConfig({ envFile: missing, strategiesDir: world.strategiesDir }, { env: {} }));
    expect(lines(error.problems)).toEqual([`--env-file: file not found: ${missing}`, `${file}: AMOUNT: is required unless AMOUNT_QUOTE is given: AMOUNT=0.0005 buys 0.0005 base per slot, AMOUNT_QUOTE=50 spends about 50 quote per slot`]);
  });

  it('reports an unreadable instance file (a dangling link) instead of skipping it', async () => {
    symlinkSync(join(world.dir, 'gone.env'), join(world.strategiesDir, 'ghost.env'));
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(lines(error.problems)).toEqual([`${join(world.strategiesDir, 'ghost.env')}: file not found`]);
  });

  it('keeps TIMEZONE as the zone data spells it, and refuses a fixed UTC offset (no daylight saving), naming the key', async () => {
    world.instance('typed', `${DCA}\nTIMEZONE=europe/berlin`);
    const config = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} });
    expect(config.instances.map((instance) => instance.timezone)).toEqual(['Europe/Berlin']);
    const offset = world.instance('offset', `${DCA}\nTIMEZONE=+02:00`);
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(lines(error.problems)).toEqual([`${offset}: TIMEZONE: is a fixed UTC offset, which keeps no daylight saving: give the zone's IANA name, such as Europe/Berlin (Etc/GMT-2 is a fixed offset on purpose) (got "+02:00")`]);
  });

  it('refuses two instance names that are one file (links to it): its settings would buy twice, a budget each', async () => {
    const real = join(world.dir, 'dca-template.txt');
    writeFileSync(real, DCA);
    symlinkSync(real, join(world.strategiesDir, 'a.env'));
    symlinkSync(real, join(world.strategiesDir, 'b.env'));
    world.instance('c', DCA);
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} }));
    expect(lines(error.problems)).toEqual([
      expect.stringMatching(new RegExp(`: ${join(world.strategiesDir, 'a.env').replace(/[.]/g, '\\.')} and ${join(world.strategiesDir, 'b.env').replace(/[.]/g, '\\.')} are one file \\(links to it\\): each name is an instance, so its settings would buy twice, with a budget each; copy the file if two instances are meant$`)),
    ]);
    expect(exitCodeFor(error)).toBe(EXIT.badInput);
  });

  it('turns a strategy that throws something other than a ConfigError into a problem, and checks the strategy API version', async () => {
    const dca = STRATEGIES.get('dca');
    if (dca === undefined) throw new Error('dca is not registered');
    const broken = { ...dca, name: 'broken', parseParams: () => { throw new TypeError('cannot read x of undefined'); } };
    const older = { ...dca, name: 'older', version: 1 as unknown as 2 };
    const strategies = new Map<string, Strategy<unknown>>([['broken', broken], ['older', older]]);
    const a = world.instance('a', 'STRATEGY=broken\nSCHEDULE="0 9 * * *"');
    const b = world.instance('b', 'STRATEGY=older\nSCHEDULE="0 9 * * *"');
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {}, strategies }));
    expect(lines(error.problems)).toEqual([
      `${a}: STRATEGY: strategy broken failed while reading its keys (a bug in the strategy): cannot read x of undefined`,
      `${b}: STRATEGY: strategy older is written for strategy API version 1, but this stacker runs version 2: ${STRATEGY_API_CHANGES}`,
    ]);
  });
});

describe('loadStrategyFiles (stacker backtest --strategy FILE.env)', () => {
  it('validates named files the same way and returns the same InstanceConfig, sorted', async () => {
    const dca = world.instance('dca-btc', `${DCA}\nBUDGET_QUOTE_PER_WEEK=100`);
    const report = world.file('elsewhere/report.env', REPORT);
    const instances = await loadStrategyFiles([dca, report]);
    expect(instances.map((i) => [i.instance, i.file])).toEqual([
      ['dca-btc', dca],
      ['report', report],
    ]);
    const fromFolder = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} });
    // The same validation: equal in everything but the compiled schedule, which is a new object per parse.
    const { schedule: _a, ...fromFiles } = instances[0] ?? {};
    const { schedule: _b, ...fromDir } = fromFolder.instances[0] ?? {};
    expect(fromFiles).toEqual(fromDir);
    expect(Object.isFrozen(instances)).toBe(true);
  });

  it('reports every file at once, a missing one included', async () => {
    const bad = world.instance('bad', 'STRATEGY=dca');
    const missing = join(world.dir, 'missing.env');
    const error = await configErrorOf(loadStrategyFiles([bad, missing]));
    expect(error.problems.map((p) => `${p.source}|${p.field}`)).toEqual([`${bad}|SCHEDULE`, `${bad}|MARKET`, `${bad}|AMOUNT`, `undefined|${missing}`]);
    expect(lines(error.problems).at(-1)).toBe(`${missing}: file not found`);
  });

  it('needs at least one file', async () => {
    const error = await configErrorOf(loadStrategyFiles([]));
    expect(lines(error.problems)).toEqual(['--strategy: give at least one strategy instance file (NAME.env)']);
  });

});
