import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseAccountKey } from '../../src/config/accounts.ts';
import { loadDaemonConfig } from '../../src/config/daemon-config.ts';
import { ConfigWorld, DCA, REPORT, configErrorOf, lines } from './helpers.ts';

let world: ConfigWorld;
beforeEach(() => {
  world = new ConfigWorld();
});
afterEach(() => world.cleanup());

const SECRET_A = 'sk_acct_a_0123456789_SECRET';
const SECRET_B = 'sk_acct_b_9876543210_SECRET';
const LIVE = { STACKER_MODE: 'live' };
const load = (env: Record<string, string>, flags: { live?: boolean; envFile?: string } = {}) =>
  loadDaemonConfig({ strategiesDir: world.strategiesDir, dataDir: join(world.dir, 'data'), ...flags }, { env });

describe('accounts: ACCOUNT= in an instance file, keys in the global env', () => {
  it('an existing config without ACCOUNT trades on the default account, with STACKER_API_KEY', async () => {
    world.instance('dca-btc', DCA);
    const config = await load({ ...LIVE, STACKER_API_KEY: 'k0', STACKER_API_SECRET: 's0' }, { live: true });
    expect(config.instances[0]?.account).toBe('default');
    expect([...config.accounts.keys()]).toEqual(['default']);
    expect(config.accounts.get('default')?.credentials?.apiKey).toBe('k0');
    expect(config.accounts.get('default')?.instances).toEqual(['dca-btc']);
  });

  it('reads each named account: key, secret, its own endpoint or the global one, its instances', async () => {
    world.instance('a-dca', `${DCA}\nACCOUNT=main`);
    world.instance('b-dca', `${DCA}\nACCOUNT=side_2`);
    world.instance('c-dca', DCA);
    const config = await load(
      {
        ...LIVE,
        STACKER_API_KEY: 'k0',
        STACKER_API_SECRET: 's0',
        STACKER_REGION: 'eu',
        STACKER_ACCOUNT_main_API_KEY: 'ka',
        STACKER_ACCOUNT_main_API_SECRET: SECRET_A,
        STACKER_ACCOUNT_side_2_API_KEY: 'kb',
        STACKER_ACCOUNT_side_2_API_SECRET: SECRET_B,
        STACKER_ACCOUNT_side_2_REGION: 'eu',
      },
      { live: true },
    );
    expect([...config.accounts.keys()]).toEqual(['default', 'main', 'side_2']);
    expect(config.accounts.get('main')).toMatchObject({ endpoint: 'eu', instances: ['a-dca'] });
    expect(config.accounts.get('main')?.credentials?.apiKey).toBe('ka');
    expect(config.accounts.get('side_2')).toMatchObject({ endpoint: 'eu', instances: ['b-dca'] });
    expect(config.instances.map((i) => i.account)).toEqual(['main', 'side_2', 'default']);
  });

  it('refuses live accounts on two exchanges, naming the key that moved one: its orders could share ids with the other\'s and go unrecorded', async () => {
    world.instance('a-dca', `${DCA}\nACCOUNT=main`);
    world.instance('b-dca', `${DCA}\nACCOUNT=side`);
    const env = {
      ...LIVE,
      STACKER_ACCOUNT_main_API_KEY: 'ka',
      STACKER_ACCOUNT_main_API_SECRET: SECRET_A,
      STACKER_ACCOUNT_side_API_KEY: 'kb',
      STACKER_ACCOUNT_side_API_SECRET: SECRET_B,
      STACKER_ACCOUNT_side_BASE_URL: 'http://127.0.0.1:9999',
    };
    const { problems } = await configErrorOf(load(env, { live: true }));
    expect(problems).toEqual([
      expect.objectContaining({ field: 'STACKER_ACCOUNT_side_BASE_URL', rule: expect.stringMatching(/^puts account side on http:\/\/127\.0\.0\.1:9999, while account main trades on global: one daemon trades on one exchange .*run a daemon of its own for side's instances/) }),
    ]);
    // A dry-run's paper accounts number their orders apart: allowed there.
    await expect(load({ ...env, STACKER_MODE: 'dry-run' })).resolves.toBeDefined();
    // One exchange under two spellings is one: the global region by its URL.
    await expect(load({ ...env, STACKER_ACCOUNT_side_BASE_URL: 'https://whitebit.com' }, { live: true })).resolves.toBeDefined();
  });

  it('refuses an ACCOUNT the env does not set up beside one it does with a name that close, in dry-run too (a typo would trade a paper account of its own)', async () => {
    world.instance('a-dca', `${DCA}\nACCOUNT=kids`);
    const typo = world.instance('b-dca', `${DCA}\nACCOUNT=kid`);
    const env = { STACKER_ACCOUNT_kids_API_KEY: 'kk', STACKER_ACCOUNT_kids_API_SECRET: SECRET_A };
    const { problems } = await configErrorOf(load(env));
    expect(problems).toEqual([{ source: typo, field: 'ACCOUNT', rule: 'names account kid, which the env does not set up; did you mean kids? (account names are case-sensitive)' }]);
    // The default account too (its keys are STACKER_API_KEY's, not an account's).
    world.instance('b-dca', `${DCA}\nACCOUNT=defualt`);
    expect((await configErrorOf(load(env))).problems).toEqual([expect.objectContaining({ field: 'ACCOUNT', rule: expect.stringContaining('did you mean default?') })]);
    // A name far from every set-up one is a paper account of its own in a dry-run.
    world.instance('b-dca', `${DCA}\nACCOUNT=savings`);
    await expect(load(env)).resolves.toBeDefined();
  });

  it('needs no STACKER_API_KEY in live mode when every instance names an account', async () => {
    world.instance('a-dca', `${DCA}\nACCOUNT=main`);
    const config = await load({ ...LIVE, STACKER_ACCOUNT_main_API_KEY: 'ka', STACKER_ACCOUNT_main_API_SECRET: SECRET_A }, { live: true });
    expect([...config.accounts.keys()]).toEqual(['main']);
  });

  it('reports every account problem at once, naming field and rule, and never a secret', async () => {
    world.instance('a-dca', `${DCA}\nACCOUNT=main`);
    world.instance('b-dca', `${DCA}\nACCOUNT=Side`);
    world.instance('c-dca', `${DCA}\nACCOUNT=half`);
    world.instance('d-dca', `${DCA}\nACCOUNT=twin`);
    world.instance('e-dca', `${DCA}\nACCOUNT=bad.name`);
    const error = await configErrorOf(
      load(
        {
          ...LIVE,
          STACKER_ACCOUNT_main_API_KEY: 'same-key',
          STACKER_ACCOUNT_main_API_SECRET: SECRET_A,
          STACKER_ACCOUNT_side_API_KEY: 'kb',
          STACKER_ACCOUNT_side_API_SECRET: SECRET_B,
          STACKER_ACCOUNT_half_API_KEY: 'kh',
          STACKER_ACCOUNT_twin_API_KEY: 'same-key',
          STACKER_ACCOUNT_twin_API_SECRET: SECRET_B,
          STACKER_ACCOUNT_spare_API_KEY: 'kc',
          STACKER_ACCOUNT_spare_API_SECRET: SECRET_B,
        },
        { live: true },
      ),
    );
    const text = lines(error.problems).join('\n');
    expect(text).toContain(`${join(world.strategiesDir, 'e-dca.env')}: ACCOUNT: must be 1 to 32 letters, digits, underscores or dashes`);
    expect(text).toMatch(/b-dca\.env: ACCOUNT: names account Side, but STACKER_ACCOUNT_Side_API_KEY and STACKER_ACCOUNT_Side_API_SECRET are not set \(the env sets account side: account names are case-sensitive\)/);
    expect(text).toContain('STACKER_ACCOUNT_half_API_SECRET: is not set, but STACKER_ACCOUNT_half_API_KEY is (from environment); set both');
    expect(text).toContain('STACKER_ACCOUNT_twin_API_KEY: is the same API key as STACKER_ACCOUNT_main_API_KEY');
    expect(text).toContain('STACKER_ACCOUNT_spare_API_KEY: account spare is set up here but no instance file says ACCOUNT=spare');
    expect(text).toContain('STACKER_ACCOUNT_side_API_KEY: account side is set up here but no instance file says ACCOUNT=side (an instance names Side: account names are case-sensitive)');
    expect(text).not.toContain('same-key');
    expect(text).not.toContain(SECRET_A);
    expect(text).not.toContain(SECRET_B);
  });

  it('refuses a shared key between a named account and the default one, in dry-run too', async () => {
    world.instance('a-dca', `${DCA}\nACCOUNT=main`);
    world.instance('c-dca', DCA);
    const error = await configErrorOf(load({ STACKER_API_KEY: 'k0', STACKER_API_SECRET: 's0', STACKER_ACCOUNT_main_API_KEY: 'k0', STACKER_ACCOUNT_main_API_SECRET: SECRET_A }));
    expect(lines(error.problems)).toEqual([expect.stringMatching(/^STACKER_ACCOUNT_main_API_KEY: is the same API key as STACKER_API_KEY/)]);
  });

  it("refuses the default account's key under an account name: it is STACKER_API_KEY", async () => {
    world.instance('c-dca', DCA);
    const error = await configErrorOf(load({ STACKER_ACCOUNT_default_API_KEY: 'k0' }));
    expect(lines(error.problems)).toContain('environment: STACKER_ACCOUNT_default_API_KEY: the default account (instances without ACCOUNT) takes its API_KEY from STACKER_API_KEY; set that instead');
  });

  it('dry-run needs no account keys and keeps none; each account has its own paper wallet', async () => {
    world.instance('a-dca', `${DCA}\nACCOUNT=main`);
    world.instance('b-dca', `${DCA}\nACCOUNT=side`);
    const config = await load({
      STACKER_DRY_RUN_WALLET: 'USDT=100',
      STACKER_ACCOUNT_side_DRY_RUN_WALLET: 'USDT=7,BTC=1',
      STACKER_ACCOUNT_main_API_KEY: 'ka',
      STACKER_ACCOUNT_main_API_SECRET: SECRET_A,
    });
    expect(config.mode).toBe('dry-run');
    expect(config.accounts.get('main')?.credentials).toBeNull();
    expect(String(config.accounts.get('main')?.dryRunWallet.get('USDT'))).toBe('100');
    expect(String(config.accounts.get('side')?.dryRunWallet.get('USDT'))).toBe('7');
    expect(String(config.accounts.get('side')?.dryRunWallet.get('BTC'))).toBe('1');
    expect(inspect(config, { depth: 10 })).not.toContain(SECRET_A);
    expect(JSON.stringify(config)).not.toContain(SECRET_A);
  });

  it('in live mode the secret stays out of JSON and inspect', async () => {
    world.instance('a-dca', `${DCA}\nACCOUNT=main`);
    const config = await load({ ...LIVE, STACKER_ACCOUNT_main_API_KEY: 'ka', STACKER_ACCOUNT_main_API_SECRET: SECRET_A }, { live: true });
    expect(config.accounts.get('main')?.credentials?.apiSecret).toBe(SECRET_A);
    expect(inspect(config, { depth: 10 })).not.toContain(SECRET_A);
    expect(JSON.stringify([...config.accounts.values()])).not.toContain(SECRET_A);
  });

  it('reads account budget caps and the asset they count; refuses a cap over instances of different quote assets', async () => {
    world.instance('a-dca', `${DCA}\nACCOUNT=main`);
    world.instance('b-dca', `${DCA}\nACCOUNT=main`);
    const config = await load({ STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_DAY: '50', STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_MONTH: '900.5' });
    expect(String(config.accounts.get('main')?.budgets.day)).toBe('50');
    expect(config.accounts.get('main')?.budgets.week).toBeNull();
    expect(config.accounts.get('main')?.budgetAsset).toBe('USDT');

    world.instance('c-dca', ['STRATEGY=dca', 'SCHEDULE="0 9 * * *"', 'MARKET=BTC_EUR', 'AMOUNT=0.0005', 'ACCOUNT=main'].join('\n'));
    world.instance('r', `${REPORT}\nACCOUNT=rep`);
    const error = await configErrorOf(load({ STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_WEEK: '-1', STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_DAY: '10', STACKER_ACCOUNT_rep_BUDGET_QUOTE_PER_DAY: '10' }));
    const text = lines(error.problems).join('\n');
    expect(text).toContain('STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_WEEK: must be a plain decimal > 0');
    expect(text).toContain('STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_DAY: a cap counts one quote asset, but the instances of account main spend EUR (c-dca), USDT (a-dca, b-dca)');
    expect(text).toContain('STACKER_ACCOUNT_rep_BUDGET_QUOTE_PER_DAY: account rep has a budget cap, but none of its instances\' strategies declares a budgetAsset (they place no orders, or their authors left it out), so the cap has nothing to count');
  });

  it("counts an account's caps in UTC, or in the zone it names; refuses a bad zone and a zone without a cap", async () => {
    world.instance('a-dca', `${DCA}\nACCOUNT=main`);
    world.instance('b-dca', `${DCA}\nACCOUNT=side`);
    const utc = await load({ STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_DAY: '50' });
    expect(utc.accounts.get('main')?.budgetTimeZone).toBe('UTC');
    const berlin = await load({ STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_DAY: '50', STACKER_ACCOUNT_main_BUDGET_TIMEZONE: 'Europe/Berlin' });
    expect(berlin.accounts.get('main')?.budgetTimeZone).toBe('Europe/Berlin');
    // Typed in other capitals: kept as the zone data spells it.
    const typed = await load({ STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_DAY: '50', STACKER_ACCOUNT_main_BUDGET_TIMEZONE: 'europe/berlin' });
    expect(typed.accounts.get('main')?.budgetTimeZone).toBe('Europe/Berlin');
    const offset = await configErrorOf(load({ STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_DAY: '50', STACKER_ACCOUNT_main_BUDGET_TIMEZONE: '+02:00' }));
    expect(lines(offset.problems).join('\n')).toContain('STACKER_ACCOUNT_main_BUDGET_TIMEZONE: is a fixed UTC offset, which keeps no daylight saving: give the zone\'s IANA name, such as Europe/Berlin (Etc/GMT-2 is a fixed offset on purpose) (got "+02:00")');

    const error = await configErrorOf(load({ STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_DAY: '50', STACKER_ACCOUNT_main_BUDGET_TIMEZONE: 'Europe/Berlinn', STACKER_ACCOUNT_side_BUDGET_TIMEZONE: 'UTC' }));
    const text = lines(error.problems).join('\n');
    expect(text).toContain('STACKER_ACCOUNT_main_BUDGET_TIMEZONE: must be an IANA time zone such as UTC or Europe/Berlin (got "Europe/Berlinn")');
    expect(text).toContain('STACKER_ACCOUNT_side_BUDGET_TIMEZONE: account side has no cap (STACKER_ACCOUNT_side_BUDGET_QUOTE_PER_DAY, _WEEK or _MONTH) for it to count');
  });

  it('the env file accepts account keys and names a misspelt one', async () => {
    world.instance('a-dca', `${DCA}\nACCOUNT=main`);
    const envFile = world.file('global.env', ['STACKER_ACCOUNT_main_API_KEY=ka', `STACKER_ACCOUNT_main_API_SECRET=${SECRET_A}`, 'STACKER_ACCOUNT_main_API_KYE=x'].join('\n'));
    const error = await configErrorOf(load({}, { envFile }));
    expect(lines(error.problems)).toEqual([
      `env file ${envFile}: STACKER_ACCOUNT_main_API_KYE: is not an account setting: write STACKER_ACCOUNT_<NAME>_<SETTING>, NAME being 1 to 32 letters, digits, underscores or dashes (case-sensitive: it is written the same way in STACKER_ACCOUNT_<NAME>_API_KEY), SETTING one of API_KEY, API_SECRET, REGION, BASE_URL, DRY_RUN_WALLET, BUDGET_QUOTE_PER_DAY, BUDGET_QUOTE_PER_WEEK, BUDGET_QUOTE_PER_MONTH, BUDGET_TIMEZONE`,
    ]);
  });

  it('parses account keys whose names hold underscores, by the longest setting suffix', () => {
    expect(parseAccountKey('STACKER_ACCOUNT_my_acc_API_SECRET')).toEqual({ name: 'my_acc', suffix: 'API_SECRET' });
    expect(parseAccountKey('STACKER_ACCOUNT_x_BUDGET_QUOTE_PER_DAY')).toEqual({ name: 'x', suffix: 'BUDGET_QUOTE_PER_DAY' });
    expect(parseAccountKey('STACKER_ACCOUNT__API_KEY')).toBeNull();
    expect(parseAccountKey('STACKER_ACCOUNT_a.b_API_KEY')).toBeNull();
    expect(parseAccountKey('STACKER_API_KEY')).toBeNull();
  });
});
