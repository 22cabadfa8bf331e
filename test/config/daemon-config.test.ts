import { chmodSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadDaemonConfig } from '../../src/config/daemon-config.ts';
import { ConfigError } from '../../src/domain/errors.ts';
import { Decimal } from '../../src/domain/money.ts';
import { STRATEGIES } from '../../strategies/index.ts';
import { ConfigWorld, DCA, REPORT, SWEEP, configErrorOf, lines } from './helpers.ts';

let world: ConfigWorld;
beforeEach(() => {
  world = new ConfigWorld();
});
afterEach(() => world.cleanup());

const SECRET = 'sk_live_0123456789abcdef_SECRET';

describe('loadDaemonConfig: a valid configuration', () => {
  it('loads every *.env of the strategies folder, sorted by instance name, with defaults for the optional engine keys', async () => {
    world.instance('dca-btc', DCA);
    world.instance('balance-report', REPORT);
    world.instance('flex-sweep-usdt', SWEEP);
    const config = await loadDaemonConfig({ strategiesDir: world.strategiesDir, dataDir: join(world.dir, 'data') }, { env: {} });

    expect(config.instances.map((i) => i.instance)).toEqual(['balance-report', 'dca-btc', 'flex-sweep-usdt']);
    const dca = config.instances.find((i) => i.instance === 'dca-btc');
    expect(dca).toMatchObject({
      file: join(world.strategiesDir, 'dca-btc.env'),
      timezone: 'UTC',
      enabled: true,
      catchUp: { policy: 'skip' },
      budgets: { day: null, week: null, month: null },
      maxOrderQuote: null,
    });
    expect(dca?.strategy).toBe(STRATEGIES.get('dca'));
    expect(dca?.params).toMatchObject({ MARKET: 'BTC_USDT', STP: 'no', ALLOW_TRANSFER: false, AMOUNT_QUOTE: null });
    expect(String((dca?.params as { AMOUNT: Decimal }).AMOUNT)).toBe('0.0005');
  });

  it('reads the engine keys: time zone, catch-up window, budgets and the order limit as Decimals', async () => {
    world.instance(
      'dca-eth',
      [
        'STRATEGY=dca',
        'SCHEDULE="0 9 * * 1"',
        'TIMEZONE=Europe/Berlin',
        'ENABLED=false',
        'CATCH_UP=last',
        'CATCH_UP_WINDOW=6h',
        'BUDGET_QUOTE_PER_DAY=40',
        'BUDGET_QUOTE_PER_WEEK=250.5',
        'BUDGET_QUOTE_PER_MONTH=1000',
        'MAX_ORDER_QUOTE=50',
        'MARKET=ETH_USDT',
        'AMOUNT=0.01',
      ].join('\n'),
    );
    const [instance] = (await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} })).instances;
    expect(instance).toMatchObject({ instance: 'dca-eth', timezone: 'Europe/Berlin', enabled: false, catchUp: { policy: 'last', windowMs: 6 * 3_600_000 } });
    expect(instance?.budgets.week).toBeInstanceOf(Decimal);
    expect([instance?.budgets.day, instance?.budgets.week, instance?.budgets.month, instance?.maxOrderQuote].map(String)).toEqual(['40', '250.5', '1000', '50']);
  });

  it('reads the global settings: folders, metrics, paper wallet, slippage and kill switch', async () => {
    world.instance('dca-btc', DCA);
    const envFile = world.file(
      '.env',
      [
        `STACKER_STRATEGIES_DIR=${world.strategiesDir}`,
        'STACKER_DATA_DIR=/var/lib/stacker',
        'STACKER_LOCK_DIR=/var/lib/stacker/locks',
        'STACKER_METRICS_PORT=9464',
        'STACKER_METRICS_HOST=0.0.0.0',
        'STACKER_METRICS_ALLOWED_HOSTS=localhost, Stacker.Example.com,[::1]',
        'STACKER_METRICS_TRUSTED_PROXIES=127.0.0.1, [::1],::FFFF:10.0.0.7',
        'STACKER_DRY_RUN_WALLET= USDT=1000.5 , BTC=0 ',
        'STACKER_DRY_RUN_SLIPPAGE_PCT=0.1',
        'STACKER_KILL_SWITCH_FILE=/var/lib/stacker/STOP',
        'STACKER_KILL_SWITCH=true',
        'STACKER_LOG_LEVEL=debug',
        'STACKER_REGION=eu',
      ].join('\n'),
    );
    const config = await loadDaemonConfig({ envFile }, { env: {} });
    expect(config).toMatchObject({
      mode: 'dry-run',
      modeNote: null,
      dataDir: '/var/lib/stacker',
      lockDir: '/var/lib/stacker/locks',
      strategiesDir: world.strategiesDir,
      metricsPort: 9464,
      metricsHost: '0.0.0.0',
      metricsAllowedHosts: ['localhost', 'stacker.example.com', '[::1]'],
      metricsTrustedProxies: new Set(['127.0.0.1', '::1', '10.0.0.7']),
      killSwitchFile: '/var/lib/stacker/STOP',
      killSwitchEnv: true,
      settings: { endpoint: 'eu', logLevel: 'debug' },
    });
    expect([...config.dryRunWallet].map(([ticker, amount]) => `${ticker}=${amount.toString()}`)).toEqual(['USDT=1000.5', 'BTC=0']);
    expect(config.dryRunSlippagePct.toString()).toBe('0.1');
  });

  it('refuses a STACKER_LOCK_DIR that is a file, naming it', async () => {
    world.instance('dca-btc', DCA);
    const file = world.file('not-a-folder', '');
    const error = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_LOCK_DIR: file } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toContainEqual({ source: 'environment', field: 'STACKER_LOCK_DIR', rule: `is not a folder: ${file}` });
  });

  it('uses the defaults: ./data, config/strategies, no metrics on 127.0.0.1, an empty wallet, no kill switch', async () => {
    world.instance('dca-btc', DCA);
    const config = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} });
    expect(config).toMatchObject({ dataDir: './data', lockDir: null, metricsPort: null, metricsHost: '127.0.0.1', killSwitchFile: null, killSwitchEnv: false });
    expect(config.dryRunWallet.size).toBe(0);
    expect(config.dryRunSlippagePct.isZero()).toBe(true);
  });

  it('lets a flag win over the environment, and the environment win over the env file; an empty value counts as unset', async () => {
    world.instance('dca-btc', DCA);
    const envFile = world.file('.env', 'STACKER_DATA_DIR=/from/file\nSTACKER_METRICS_PORT=1111\nSTACKER_METRICS_HOST=10.0.0.1\n');
    const env = { STACKER_DATA_DIR: '/from/env', STACKER_METRICS_PORT: '2222', STACKER_METRICS_HOST: '' };
    const fromEnv = await loadDaemonConfig({ envFile, strategiesDir: world.strategiesDir }, { env });
    expect(fromEnv).toMatchObject({ dataDir: '/from/env', metricsPort: 2222, metricsHost: '10.0.0.1' });
    const fromFlag = await loadDaemonConfig({ envFile, strategiesDir: world.strategiesDir, dataDir: '/from/flag' }, { env });
    expect(fromFlag.dataDir).toBe('/from/flag');
  });

  it('takes STACKER_STRATEGIES_DIR from the environment when --strategies is not given', async () => {
    world.instance('dca-btc', DCA);
    const config = await loadDaemonConfig({}, { env: { STACKER_STRATEGIES_DIR: world.strategiesDir } });
    expect(config.instances.map((i) => i.instance)).toEqual(['dca-btc']);
  });

  // A folder named NAME.env is refused instead (instance-files.test.ts): Docker makes one when a bind-mounted file is missing.
  it('ignores hidden files, files not ending in .env and other folders, and follows symbolic links to files', async () => {
    world.instance('dca-btc', DCA);
    world.file('strategies/.hidden.env', 'STRATEGY=nonsense');
    world.file('strategies/notes.txt', 'STRATEGY=nonsense');
    world.file('strategies/dca.env.example', 'STRATEGY=nonsense');
    world.file('strategies/sub/inner.env', 'STRATEGY=nonsense');
    const target = world.file('elsewhere/report.env', REPORT);
    symlinkSync(target, join(world.strategiesDir, 'linked-report.env'));
    const config = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} });
    expect(config.instances.map((i) => i.instance)).toEqual(['dca-btc', 'linked-report']);
  });

  it('returns a frozen config: the object, each instance, its budgets and the paper wallet', async () => {
    world.instance('dca-btc', `${DCA}\nBUDGET_QUOTE_PER_WEEK=100`);
    const config = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_DRY_RUN_WALLET: 'USDT=1' } });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.instances)).toBe(true);
    expect(Object.isFrozen(config.instances[0])).toBe(true);
    expect(Object.isFrozen(config.instances[0]?.budgets)).toBe(true);
    expect(Object.isFrozen(config.instances[0]?.params)).toBe(true);
    expect(Object.isFrozen(config.settings)).toBe(true);
    expect(() => (config.dryRunWallet as Map<string, Decimal>).set('BTC', new Decimal(1))).toThrow(TypeError);
    expect(() => (config.dryRunWallet as Map<string, Decimal>).delete('USDT')).toThrow(TypeError);
    expect(config.dryRunWallet.get('USDT')?.toString()).toBe('1');
  });

  it("never takes a strategy file's keys from process.env", async () => {
    // The environment has every dca key; the file lacks AMOUNT and sets no SCHEDULE.
    world.instance('dca-btc', 'STRATEGY=dca\nMARKET=BTC_USDT\n');
    const env = { AMOUNT: '0.0005', SCHEDULE: '0 9 * * *', STRATEGY: 'flex-sweep', TIMEZONE: 'Mars/Olympus', MARKET: 'ETH_USDT' };
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env }));
    const file = join(world.strategiesDir, 'dca-btc.env');
    expect(lines(error.problems)).toEqual([
      `${file}: SCHEDULE: is required: a cron expression of 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, such as "0 9 * * *"`,
      `${file}: AMOUNT: is required unless AMOUNT_QUOTE is given: AMOUNT=0.0005 buys 0.0005 base per slot, AMOUNT_QUOTE=50 spends about 50 quote per slot`,
    ]);
  });
});

describe('loadDaemonConfig: the global env file', () => {
  it.skipIf(process.platform === 'win32')('notes an env file whose secrets other users can read, for the daemon to log at start (it starts all the same)', async () => {
    world.instance('dca-btc', DCA);
    const envFile = world.file('.env', 'STACKER_MODE=live\nSTACKER_API_KEY=k3yZ\nSTACKER_API_SECRET=s3cr3tZ\n');
    chmodSync(envFile, 0o644);
    const open = await loadDaemonConfig({ envFile, strategiesDir: world.strategiesDir, live: true }, { env: {} });
    expect(open.envFileNote).toBe(`${envFile} holds STACKER_API_SECRET and other users of this machine can read it (mode 0644): make it yours only with chmod 600 ${envFile}`);
    chmodSync(envFile, 0o600);
    expect((await loadDaemonConfig({ envFile, strategiesDir: world.strategiesDir, live: true }, { env: {} })).envFileNote).toBeNull();
  });

  it('accepts nothing unprefixed silently: LOG_LEVEL, METRICS_PORT and MODE point at their STACKER_ names', async () => {
    world.instance('dca-btc', DCA);
    const envFile = world.file('.env', 'LOG_LEVEL=debug\nMETRICS_PORT=9464\nMODE=live\nAPI_SECRET=hunter2\nTZ=Europe/Berlin\nNODE=x\n');
    const error = await configErrorOf(loadDaemonConfig({ envFile, strategiesDir: world.strategiesDir }, { env: {} }));
    const source = `env file ${envFile}`;
    expect(lines(error.problems)).toEqual([
      `${source}: LOG_LEVEL: is not read: every stacker setting starts with STACKER_; did you mean STACKER_LOG_LEVEL?`,
      `${source}: METRICS_PORT: is not read: every stacker setting starts with STACKER_; did you mean STACKER_METRICS_PORT?`,
      `${source}: MODE: is not read: every stacker setting starts with STACKER_; did you mean STACKER_MODE?`,
      `${source}: API_SECRET: is not read: every stacker setting starts with STACKER_; did you mean STACKER_API_SECRET?`,
    ]);
    expect(error.message).not.toContain('hunter2');
  });

  it('suggests the STACKER_ key a misspelt one meant, and says where instance keys belong', async () => {
    world.instance('dca-btc', DCA);
    const envFile = world.file('.env', 'STACKER_DATADIR=/data\nSTACKER_COLOUR=blue\nSTRATEGY=dca\n');
    const error = await configErrorOf(loadDaemonConfig({ envFile, strategiesDir: world.strategiesDir }, { env: {} }));
    const rules = error.problems.map((p) => `${p.field}: ${p.rule}`);
    expect(rules[0]).toBe('STACKER_DATADIR: is not a stacker setting; did you mean STACKER_DATA_DIR?');
    expect(rules[1]).toMatch(/^STACKER_COLOUR: is not a stacker setting; the settings are STACKER_API_KEY, /);
    expect(rules[2]).toMatch(/^STRATEGY: is a strategy instance key: it belongs in an instance file/);
  });

  it('leaves unprefixed variables of the process environment alone (they are none of its business)', async () => {
    world.instance('dca-btc', DCA);
    const config = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { LOG_LEVEL: 'debug', MODE: 'live', METRICS_PORT: 'x', STACKER_BOGUS: '1' } });
    expect(config.mode).toBe('dry-run');
  });

  it('refuses a STACKER_ variable of the process environment that is a setting mistyped: the daemon would trade as if it were unset', async () => {
    world.instance('dca-btc', DCA);
    const error = await configErrorOf(
      loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_KILL_SWICH: '1', stacker_mode: 'live', STACKER_ACCOUNT_kids_API_SECRT: SECRET, STACKER_BENCH_MINUTE_CSV: '/x.csv', STACKER_BOGUS: '1' } }),
    );
    expect(lines(error.problems)).toEqual([
      expect.stringMatching(/^environment: STACKER_ACCOUNT_kids_API_SECRT: is not an account setting: write STACKER_ACCOUNT_<NAME>_<SETTING>, .*SETTING one of API_KEY, API_SECRET, /),
      'environment: STACKER_KILL_SWICH: is not a stacker setting, and so close to one that it is taken for a typo: did you mean STACKER_KILL_SWITCH?',
      'environment: stacker_mode: is not a stacker setting, and so close to one that it is taken for a typo: did you mean STACKER_MODE?',
    ]);
    expect(error.message).not.toContain(SECRET);
  });

  it('refuses a setting whose value came with its quotes (docker run --env-file passes them on), never showing the value; an env file read by stacker is unquoted as dotenv does', async () => {
    world.instance('dca-btc', DCA);
    const token = '0123456789abcdef0123';
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_CONTROL_TOKEN: `"${token}"`, STACKER_API_SECRET: `'${SECRET}`, STACKER_API_KEY: `key"` } }));
    expect(lines(error.problems)).toEqual([
      expect.stringMatching(/^environment: STACKER_API_KEY: starts or ends with a quote: /),
      expect.stringMatching(/^environment: STACKER_API_SECRET: starts or ends with a quote: docker run --env-file and compose's env_file pass a value's quotes on as part of it/),
      expect.stringMatching(/^environment: STACKER_CONTROL_TOKEN: starts or ends with a quote: .*write it without quotes$/),
    ]);
    expect(error.message).not.toContain(token);
    expect(error.message).not.toContain(SECRET);
    const envFile = world.file('.env', `STACKER_CONTROL_TOKEN="${token}"\n`);
    await expect(loadDaemonConfig({ envFile, strategiesDir: world.strategiesDir }, { env: {} })).resolves.toBeDefined();
  });

  it('reports a line of the env file dotenv would skip, by number only (the file holds the secret)', async () => {
    world.instance('dca-btc', DCA);
    const envFile = world.file('.env', `STACKER_API_KEY=key\nSTACKER_API_SECRET ${SECRET}\n`);
    const error = await configErrorOf(loadDaemonConfig({ envFile, strategiesDir: world.strategiesDir }, { env: {} }));
    expect(lines(error.problems)).toEqual([`env file ${envFile}: line 2: is not KEY=value, a comment or blank, so dotenv skips it (a missing "="?)`]);
    expect(error.message).not.toContain(SECRET);
  });
});

describe('loadDaemonConfig: a value dotenv would cut at a "#"', () => {
  it('refuses an unquoted value with a "#" glued to it, naming the key and line, never the value; a quoted one and a comment after a blank are fine', async () => {
    world.instance('dca-btc', DCA);
    const envFile = world.file('.env', 'STACKER_API_KEY=key-123\nSTACKER_API_SECRET=sec#ret456\nSTACKER_LOG_LEVEL=info # a comment\n');
    const error = await configErrorOf(loadDaemonConfig({ envFile, strategiesDir: world.strategiesDir }, { env: {} }));
    expect(lines(error.problems)).toEqual([
      `env file ${envFile}: STACKER_API_SECRET: holds a "#" right after other characters (line 2): stacker --env-file (dotenv) reads the value only up to it, as a comment, where docker --env-file keeps all of it; put the value in quotes for stacker --env-file (docker --env-file would pass the quotes on), or put a blank before the "#" if a comment starts there`,
    ]);
    expect(error.message).not.toContain('ret456');
    const quoted = world.file('quoted.env', 'STACKER_API_KEY=key-123\nSTACKER_API_SECRET="sec#ret456"\nSTACKER_LOG_LEVEL=info # a comment\n');
    await expect(loadDaemonConfig({ envFile: quoted, strategiesDir: world.strategiesDir }, { env: {} })).resolves.toBeDefined();
  });
});

describe('loadDaemonConfig: every problem of the env file at once', () => {
  it('reports a key set twice together with the file\'s other problems and the instance files\', each once: one fix-and-retry, not three', async () => {
    world.instance('dca-btc', DCA.replace('AMOUNT=0.0005', 'AMOUNT=-1'));
    const envFile = world.file('.env', 'STACKER_LOG_LEVEL=info\nSTACKER_DATADIR=/data\nSTACKER_LOG_LEVEL=debug\nSTACKER_API_SECRET oops\n');
    const error = await configErrorOf(loadDaemonConfig({ envFile, strategiesDir: world.strategiesDir }, { env: {} }));
    expect(lines(error.problems)).toEqual([
      `${envFile}: STACKER_LOG_LEVEL: is set on lines 1 and 3; dotenv would keep the last one without a word, so say it once`,
      `env file ${envFile}: STACKER_DATADIR: is not a stacker setting; did you mean STACKER_DATA_DIR?`,
      `env file ${envFile}: line 4: is not KEY=value, a comment or blank, so dotenv skips it (a missing "="?)`,
      expect.stringMatching(/dca-btc\.env: AMOUNT: /),
    ]);
  });
});

describe('loadDaemonConfig: live needs two switches and the keys', () => {
  const keys = { STACKER_API_KEY: 'key-123', STACKER_API_SECRET: SECRET };

  it('runs live only with STACKER_MODE=live and --live together', async () => {
    world.instance('dca-btc', DCA);
    const config = await loadDaemonConfig({ strategiesDir: world.strategiesDir, live: true }, { env: { ...keys, STACKER_MODE: 'live' } });
    expect(config.mode).toBe('live');
    expect(config.modeNote).toBeNull();
    expect(config.settings.credentials?.apiKey).toBe('key-123');
    expect(config.settings.credentials?.apiSecret).toBe(SECRET);
  });

  it('stays in dry-run with a note when only STACKER_MODE=live is given', async () => {
    world.instance('dca-btc', DCA);
    const config = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { ...keys, STACKER_MODE: 'live' } });
    expect(config.mode).toBe('dry-run');
    expect(config.modeNote).toBe('STACKER_MODE=live (environment) but --live was not given: running in dry-run; live trading needs both');
  });

  it('stays in dry-run with a note when only --live is given', async () => {
    world.instance('dca-btc', DCA);
    const unset = await loadDaemonConfig({ strategiesDir: world.strategiesDir, live: true }, { env: keys });
    expect(unset.mode).toBe('dry-run');
    expect(unset.modeNote).toBe('--live was given but STACKER_MODE is not set: running in dry-run; live trading needs STACKER_MODE=live as well');
    const envFile = world.file('.env', 'STACKER_MODE=dry-run\n');
    const dry = await loadDaemonConfig({ envFile, strategiesDir: world.strategiesDir, live: true }, { env: keys });
    expect(dry.modeNote).toBe(`--live was given but STACKER_MODE is dry-run (env file ${envFile}): running in dry-run; live trading needs STACKER_MODE=live as well`);
  });

  it('refuses live mode without credentials, naming both keys', async () => {
    world.instance('dca-btc', DCA);
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir, live: true }, { env: { STACKER_MODE: 'live' } }));
    expect(error.problems.map((p) => p.field)).toEqual(['STACKER_API_KEY', 'STACKER_API_SECRET']);
    expect(error.problems[0]?.rule).toMatch(/^is not set; live mode places real orders/);
  });

  it('refuses live mode with half the credentials or a pasted secret, never echoing the secret', async () => {
    world.instance('dca-btc', DCA);
    const half = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir, live: true }, { env: { STACKER_MODE: 'live', STACKER_API_SECRET: SECRET } }));
    expect(half.problems.map((p) => p.field)).toEqual(['STACKER_API_KEY']);
    const pasted = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir, live: true }, { env: { STACKER_MODE: 'live', STACKER_API_KEY: 'k', STACKER_API_SECRET: `${SECRET} \n` } }));
    expect(pasted.problems.map((p) => `${p.field}: ${p.rule}`)).toEqual(['STACKER_API_SECRET: contains whitespace (a stray space, newline or quote when it was pasted?)']);
    for (const error of [half, pasted]) {
      expect(error.message).not.toContain(SECRET);
      expect(JSON.stringify(error.problems)).not.toContain(SECRET);
    }
  });

  it('refuses a STACKER_MODE that is neither dry-run nor live', async () => {
    world.instance('dca-btc', DCA);
    const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_MODE: 'paper' } }));
    expect(lines(error.problems)).toEqual(['environment: STACKER_MODE: must be one of dry-run, live (got "paper")']);
  });

  it('keeps no credentials in dry-run, so a paper daemon has no way to trade', async () => {
    world.instance('dca-btc', DCA);
    const config = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: keys });
    expect(config.settings.credentials).toBeNull();
    expect(JSON.stringify(config)).not.toContain(SECRET);
    expect(inspect(config, { depth: 10 })).not.toContain(SECRET);
  });

  it('keeps the secret out of JSON and inspect in live mode too', async () => {
    world.instance('dca-btc', DCA);
    const config = await loadDaemonConfig({ strategiesDir: world.strategiesDir, live: true }, { env: { ...keys, STACKER_MODE: 'live' } });
    expect(JSON.stringify(config)).not.toContain(SECRET);
    expect(inspect(config, { depth: 10 })).not.toContain(SECRET);
  });
});

describe('loadDaemonConfig: live signed requests never cross a network in clear', () => {
  const keys = { STACKER_API_KEY: 'key-123', STACKER_API_SECRET: SECRET, STACKER_MODE: 'live' };
  const RULE =
    'which is not this machine: signed requests and account answers would cross the network in clear; use https:// ' +
    '(plain http is for a sandbox on this machine: 127.0.0.1, [::1] or localhost; on a lab network of your own, STACKER_ALLOW_PLAIN_HTTP=1 allows it)';

  it('refuses plain http:// to another machine, naming the setting that chose it and where it was set: the flag, the env file, an account\'s key', async () => {
    world.instance('dca-btc', DCA);
    const envFile = world.file('.env', 'STACKER_BASE_URL=http://sandbox:8787\n');
    const fromFile = await configErrorOf(loadDaemonConfig({ envFile, strategiesDir: world.strategiesDir, live: true }, { env: keys }));
    expect(lines(fromFile.problems)).toEqual([`env file ${envFile}: STACKER_BASE_URL: is plain http:// to sandbox, ${RULE}`]);
    const fromFlag = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir, live: true, baseUrl: 'http://whitebit.com' }, { env: keys }));
    expect(lines(fromFlag.problems)).toEqual([`--base-url: is plain http:// to whitebit.com, ${RULE}`]);

    world.instance('dca-btc', `${DCA}\nACCOUNT=kids`);
    const account = { STACKER_MODE: 'live', STACKER_ACCOUNT_kids_API_KEY: 'kk', STACKER_ACCOUNT_kids_API_SECRET: SECRET, STACKER_ACCOUNT_kids_BASE_URL: 'http://10.0.0.5:8787' };
    const ofAccount = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir, live: true }, { env: account }));
    expect(lines(ofAccount.problems)).toEqual([`environment: STACKER_ACCOUNT_kids_BASE_URL: is plain http:// to 10.0.0.5, ${RULE}`]);
  });

  it('takes plain http:// to this machine (the sandbox), and to another one in dry-run, which signs nothing', async () => {
    world.instance('dca-btc', DCA);
    for (const url of ['http://127.0.0.1:8787', 'http://localhost:8787', 'http://[::1]:8787']) {
      expect((await loadDaemonConfig({ strategiesDir: world.strategiesDir, live: true }, { env: { ...keys, STACKER_BASE_URL: url } })).mode).toBe('live');
    }
    const dry = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { ...keys, STACKER_BASE_URL: 'http://sandbox:8787' } });
    expect(dry.settings.endpoint).toBe('http://sandbox:8787');
  });

  it('takes plain http:// to another machine with STACKER_ALLOW_PLAIN_HTTP=1 (a lab network), a setting the env file may hold; any other value is refused', async () => {
    world.instance('dca-btc', DCA);
    const envFile = world.file('.env', 'STACKER_BASE_URL=http://sandbox:8787\nSTACKER_ALLOW_PLAIN_HTTP=1\n');
    const lab = await loadDaemonConfig({ envFile, strategiesDir: world.strategiesDir, live: true }, { env: keys });
    expect(lab.settings).toMatchObject({ endpoint: 'http://sandbox:8787', allowPlainHttp: true });
    const bad = await configErrorOf(loadDaemonConfig({ envFile, strategiesDir: world.strategiesDir, live: true }, { env: { ...keys, STACKER_ALLOW_PLAIN_HTTP: 'yes please' } }));
    expect(lines(bad.problems)).toContain(
      'environment: STACKER_ALLOW_PLAIN_HTTP: must be 1 or true (signed requests may go over plain http:// to a host that is not this machine), 0 or false (got "yes please")',
    );
  });
});

describe('loadDaemonConfig: STACKER_DATABASE_URL puts the journal in PostgreSQL', () => {
  const PASSWORD = 'pg-pa55word-NEVER-SHOWN';

  it('is null when unset (the data dir\'s SQLite file), and a postgres:// or postgresql:// URL when set', async () => {
    world.instance('dca-btc', DCA);
    expect((await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} })).databaseUrl).toBeNull();
    for (const url of [`postgres://stacker:${PASSWORD}@db.internal:5432/stacker`, 'postgresql://stacker@127.0.0.1/stacker?sslmode=require']) {
      const config = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_DATABASE_URL: url } });
      expect(config.databaseUrl?.url).toBe(url);
    }
  });

  it('keeps the password out of JSON and inspect: both show the URL with ***', async () => {
    world.instance('dca-btc', DCA);
    const config = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_DATABASE_URL: `postgres://stacker:${PASSWORD}@db.internal:5432/stacker` } });
    expect(config.databaseUrl?.shown).toBe('postgres://stacker:***@db.internal:5432/stacker');
    expect(JSON.stringify(config)).not.toContain(PASSWORD);
    expect(inspect(config, { depth: 10 })).not.toContain(PASSWORD);
  });

  it('refuses another scheme, a URL without a host or database, or no URL at all, naming the key and the rule but never the value', async () => {
    const ENCODE = '; a password with / # @ ? % or : in it must be percent-encoded (/ as %2F, @ as %40, # as %23), or use one of letters and digits (openssl rand -hex 32)';
    world.instance('dca-btc', DCA);
    const cases: Array<[string, string]> = [
      [`mysql://root:${PASSWORD}@db/stacker`, 'environment: STACKER_DATABASE_URL: must start with postgres:// or postgresql:// (got mysql://)'],
      [`postgres://stacker:${PASSWORD}@db.internal:5432`, `environment: STACKER_DATABASE_URL: must name a database (postgres://user@host/database)${ENCODE}`],
      [`${PASSWORD}`, `environment: STACKER_DATABASE_URL: must be a URL such as postgres://user:password@host:5432/database${ENCODE}`],
      // A password with # in it, unencoded: the rest of the URL reads as a fragment, and is no URL.
      [`postgres://stacker:pa#${PASSWORD}@db.internal:5432/stacker`, `environment: STACKER_DATABASE_URL: must be a URL such as postgres://user:password@host:5432/database${ENCODE}`],
      // A raw % that starts no %XX: node-postgres would then send another password than the one meant.
      [`postgres://stacker:LEAKa%zz${PASSWORD}@db.internal/stacker`, `environment: STACKER_DATABASE_URL: has a % in its user or password that is not percent-encoding: write % itself as %25${ENCODE}`],
      [
        `postgres://stacker:${PASSWORD}@db.internal/stacker?schema=mine&sslmode=require&options=x`,
        'environment: STACKER_DATABASE_URL: has parameter(s) "schema", "options" that stacker does not pass on; it takes host, port, user, password, sslmode, sslrootcert, sslcert, sslkey; the schema is not a setting: it is stacker_live or stacker_dry_run, one per mode (give each deployment a database of its own)',
      ],
    ];
    for (const [url, line] of cases) {
      const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_DATABASE_URL: url } }));
      expect(lines(error.problems)).toEqual([line]);
      expect(error.message).not.toContain(PASSWORD);
    }
  });

  it('refuses a TLS mode it would not apply as written and a TLS file it cannot read, naming the parameter (exit 2); takes the modes it applies', async () => {
    world.instance('dca-btc', DCA);
    const ca = world.file('ca.crt', '-----BEGIN CERTIFICATE-----\n');
    const base = `postgres://stacker:${PASSWORD}@db.internal/stacker`;
    const missing = join(world.dir, 'nonexistent.crt');
    const cases: Array<[string, string]> = [
      [`${base}?sslmode=require&sslrootcert=${missing}`, `environment: STACKER_DATABASE_URL: has sslrootcert=${missing}, which cannot be read (ENOENT): name a file this user may read`],
      [`${base}?sslmode=verify-full&sslcert=${world.dir}&sslkey=${ca}`, `environment: STACKER_DATABASE_URL: has sslcert=${world.dir}, which cannot be read (not a file): name a file this user may read`],
      [`${base}?sslmode=bogus`, 'environment: STACKER_DATABASE_URL: has sslmode="bogus", which is not a TLS mode stacker takes: use one of disable, no-verify, require, verify-ca, verify-full'],
      ...['allow', 'prefer'].map((mode): [string, string] => [
        `${base}?sslmode=${mode}`,
        `environment: STACKER_DATABASE_URL: has sslmode=${mode}, which libpq takes as "TLS if the server offers it, else plain" and node-postgres as verify-full: say which you mean, sslmode=verify-full (TLS, the certificate checked), no-verify (TLS, not checked) or disable (no TLS)`,
      ]),
      [`${base}?sslmode=verify-ca`, 'environment: STACKER_DATABASE_URL: has sslmode=verify-ca, which checks the certificate against the CA named by sslrootcert: add sslrootcert=/path/to/ca.crt, or use sslmode=verify-full'],
    ];
    for (const [url, line] of cases) {
      const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_DATABASE_URL: url } }));
      expect(lines(error.problems)).toEqual([line]);
      expect(error.message).not.toContain(PASSWORD);
    }
    for (const query of ['sslmode=disable', 'sslmode=no-verify', `sslmode=require&sslrootcert=${ca}`, `sslmode=verify-ca&sslrootcert=${ca}`, 'sslmode=verify-full', `sslrootcert=${ca}`]) {
      expect((await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_DATABASE_URL: `${base}?${query}` } })).databaseUrl?.url).toBe(`${base}?${query}`);
    }
  });

  it('STACKER_DATABASE_TIMEOUT bounds how long the database may take to answer: 10 s when unset, a duration from 1s to 5m when set', async () => {
    world.instance('dca-btc', DCA);
    expect((await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} })).databaseTimeoutMs).toBe(10_000);
    expect((await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_DATABASE_TIMEOUT: '30s' } })).databaseTimeoutMs).toBe(30_000);
    expect((await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_DATABASE_TIMEOUT: '5m' } })).databaseTimeoutMs).toBe(300_000);
    for (const text of ['0s', '500ms', '6m', '10']) {
      const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_DATABASE_TIMEOUT: text } }));
      expect(lines(error.problems)).toEqual([
        `environment: STACKER_DATABASE_TIMEOUT: must be a duration from 1s to 5m, such as 10s (got ${JSON.stringify(text)}); a shorter one would count an ordinary commit as an outage, a longer one holds a slot past its moment`,
      ]);
    }
  });
});
