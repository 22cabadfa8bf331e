import { Command, Option } from 'commander';
import { stackerVersion } from '../daemon/build-version.ts';
import { INTENT_STATUSES } from '../store/journal.ts';
import { ORDER_STATUSES } from '../domain/order.ts';
import { LIST_DEFAULT, LIST_LIMIT } from './args.ts';
import { CommandContext, type GlobalFlags, type RunState } from './context.ts';
import type { Io } from './output.ts';
import { FAULT_HELP } from './sandbox-help.ts';
import { MARKET_RULE_INPUTS as RULE_FLAGS } from '../domain/market-rule-inputs.ts';

/**
 * The command tree. Only flags, descriptions and help live here; each command's code is
 * imported when that command runs, so `stacker ping` never loads the sandbox or pino.
 * Flag values arrive as raw text and are checked by the command (src/cli/args.ts) before any
 * request, so every message has one shape: `error: --flag: rule (got "value")`.
 */

/** The one-off private commands run on the default account (STACKER_API_KEY) unless told another. */
const ACCOUNT_HELP = "the account to use, as the daemon's ACCOUNT=NAME names it: its key STACKER_ACCOUNT_<NAME>_API_KEY / _API_SECRET and endpoint (default: STACKER_API_KEY)";

/** A fixed default keeps the printed URL (and a .env that holds it) valid across restarts. */
export const DEFAULT_SANDBOX_PORT = 8787;

type Run<F> = (ctx: CommandContext, flags: F) => Promise<void>;

/**
 * Required options, checked after the unknown ones: commander checks its own required options
 * first, so a misspelt one (`--dta`) was reported as missing (`--data` not specified) rather than
 * as unknown with its suggestion (`Did you mean --data?`).
 */
const REQUIRED = new WeakSet<Option>();
class StackerCommand extends Command {
  override createCommand(name?: string): StackerCommand {
    return new StackerCommand(name);
  }

  override requiredOption(flags: string, description?: string): this {
    const option = new Option(flags, description);
    REQUIRED.add(option);
    return this.addOption(option);
  }
}

/**
 * An option of a command that has subcommands (`journal --limit`) given to one of them: commander
 * reads a parent's options before and after the subcommand's name alike and hands them to the
 * parent, where the subcommand never looks, so `journal acknowledge --limit 5` used to pass in
 * silence. Refused as unknown unless the subcommand declares the option itself (then it reads
 * the parent's value: `journal --data-dir D acknowledge`). The program's own options are global.
 */
function checkInherited(command: Command): void {
  for (let parent = command.parent; parent?.parent; parent = parent.parent) {
    for (const option of parent.options) {
      if (parent.getOptionValueSource(option.attributeName()) !== 'cli') continue;
      if (command.options.some((own) => own.long === option.long)) continue;
      const name = `stacker ${commandPath(command)}`;
      command.error(`error: unknown option '${option.long}' for '${name}': it is an option of 'stacker ${commandPath(parent)}' (see ${name} --help)`, {
        code: 'commander.unknownOption',
      });
    }
  }
}

/** Help's "Global Options": the program's own, the only options every command takes (see checkInherited). */
function programOptions(command: Command): Option[] {
  let root = command;
  while (root.parent !== null) root = root.parent;
  return root === command ? [] : root.options.filter((option) => !option.hidden);
}

function checkRequired(command: Command): void {
  for (const option of command.options) {
    if (REQUIRED.has(option) && command.getOptionValue(option.attributeName()) === undefined) {
      command.error(`error: required option '${option.flags}' not specified`, { code: 'commander.missingMandatoryOptionValue' });
    }
  }
}

/**
 * Commander's message for a usage error (`error: unknown option '--ammount'`) as the JSON error
 * line of an InputError: code E_INPUT, the flag or command it names as the field.
 */
function usageErrorJson(text: string): string {
  const rule = text.trim().replace(/^error:\s*/, '').replace(/\s*\n\s*/g, ' ');
  const named = /'(-[^' ]+|[^' -][^' ]*)[^']*'/.exec(rule)?.[1];
  return `${JSON.stringify({ error: { code: 'E_INPUT', message: rule, problems: [{ field: named ?? 'command line', rule }] } })}\n`;
}

export function buildProgram(io: Io, state: RunState): Command {
  const program = new StackerCommand('stacker');
  const action =
    <F>(load: () => Promise<Run<F>>) =>
    async (flags: F, command: Command): Promise<void> => {
      const globals = command.optsWithGlobals<GlobalFlags>();
      state.json = globals.json === true;
      const ctx = new CommandContext(commandPath(command), globals, io, state);
      // The daemon logs it at start (event env-file-readable); every other command says it here.
      if (globals.envFile !== undefined && ctx.command !== 'run') await warnOfReadableEnvFile(globals.envFile, io);
      try {
        const run = await load();
        await run(ctx, flags);
      } finally {
        await ctx.close();
      }
    };

  program
    .description('Stack crypto on a WhiteBIT-style exchange (HTTP API v4), or on the built-in sandbox.')
    .version(stackerVersion(), '-V, --version', `print the version: package.json's and, when known, the git commit it was built from (this build: ${stackerVersion()})`)
    .helpOption('-h, --help', 'show help for a command')
    .option('--base-url <url>', 'exchange base URL, e.g. http://127.0.0.1:8080 (default: $STACKER_BASE_URL, else the region)')
    .option('--region <region>', 'global or eu (default: $STACKER_REGION, else global)')
    .option('--env-file <file>', 'read STACKER_* settings from a dotenv file (the real environment wins over it)')
    .option('--json', 'print machine-readable JSON on stdout (decimals as strings)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false, visibleGlobalOptions: programOptions })
    .configureOutput({
      writeOut: (text) => io.out(text),
      // With --json a usage error is one JSON line on stderr, as every other error is; the help
      // that follows it for a person is left out.
      writeErr: (text) => {
        if (!state.json) io.err(text);
      },
      outputError: (text) => io.err(state.json ? usageErrorJson(text) : text),
    })
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .hook('preAction', (_program, command) => {
      checkInherited(command);
      checkRequired(command);
    })
    .addHelpText(
      'after',
      `
Credentials for private commands come from STACKER_API_KEY and
STACKER_API_SECRET (environment or --env-file), never from flags.
Amounts are plain decimals (0.0005, not 1e-4).

Exit codes: 0 ok, 1 unexpected error (or an output file that could not
be written after the work), 2 bad input or configuration, 3 refused by
the exchange or by a safety check of stacker's (a lost journal, another
stacker on the journal or the key), 4 temporary failure (network,
timeout, 5xx, rate limit).

Try it without an account: run \`stacker sandbox\` and follow what it prints.`,
    );

  program
    .command('sandbox')
    .description("run the simulated exchange locally until Ctrl-C (prints its URL and made-up credentials); its balances and orders start afresh at each start (its order ids do not repeat), so a daemon's journal from an earlier start holds orders it no longer knows")
    .option('--port <n>', 'port to listen on; 0 picks a free one', String(DEFAULT_SANDBOX_PORT))
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--api-key <key>', 'the API key the sandbox accepts (default: made up)')
    .option('--api-secret <secret>', 'the API secret the sandbox accepts (default: made up)')
    .option('--prices <file.csv>', 'replay candles (time,open,high,low,close,volume) instead of fixed demo prices')
    .option('--market <market>', 'the market the --prices candles belong to, e.g. BTC_USDT')
    .option('--speed <x>', 'replay speed with --prices: one candle interval passes in interval/x (default: 1)')
    .option('--clock-offset <seconds>', "run the exchange's clock this many seconds ahead of this machine's (negative: behind): rehearse a skewed host clock")
    .option('--fault <spec>', 'misbehave like a real exchange on a bad day; repeatable (see below)', (value: string, all: string[]) => [...all, value], [] as string[])
    .option(
      '--extra-account <name>',
      "serve another account of the same exchange under this name, with made-up credentials of its own: rehearse a daemon's several accounts (README \"Several accounts\"); repeatable",
      (value: string, all: string[]) => [...all, value],
      [] as string[],
    )
    .addHelpText('after', `\n${FAULT_HELP}`)
    .action(action(async () => (await import('./commands/sandbox.ts')).sandbox));

  program
    .command('demo')
    .description('start a sandbox exchange in this process and walk through every operation over real HTTP (no account needed)')
    .action(
      action(async () => async (ctx: CommandContext) => {
        const { runDemo } = await import('../demo/walkthrough.ts');
        await runDemo({ out: (line) => ctx.io.out(`${line}\n`) });
      }),
    );

  program
    .command('run')
    .description('run the daemon: every strategy instance in --strategies on its schedule, until Ctrl-C (dry-run unless STACKER_MODE=live and --live)')
    .option('--strategies <dir>', 'folder of strategy instance files, one *.env each (default: $STACKER_STRATEGIES_DIR, else config/strategies)')
    .option('--data-dir <dir>', 'where the journal lives (default: $STACKER_DATA_DIR, else ./data)')
    .option('--live', 'trade with real money; needs STACKER_MODE=live too, and API keys')
    .option('--once', "run each enabled instance's slot now (the current second), journalled like any slot, then exit: no schedule, no catch-up")
    .option('--instance <name>', 'with --once: only this instance (its file name without .env)')
    .option('--rebuild-journal', "the data dir's journal was lost (missing, empty or another file): start a new one and fill it from the exchange's order history of the last 30 days (the lost files are kept)")
    .option('--standby', 'with the journal in PostgreSQL (STACKER_DATABASE_URL): while another daemon holds it, wait as a hot standby and take over within seconds of its end, instead of refusing to start')
    .addHelpText(
      'after',
      `
Settings come from the environment and --env-file (see .env.example); each strategy
instance is one env file (see config/strategies/). Everything is checked before the
first slot; every problem is reported at once (exit 2) and nothing is sent.
SIGINT/SIGTERM: no new slots, the slot in flight finishes, the journal closes, exit 0.
SIGHUP is ignored (nothing to reload; logged as signal-ignored).
Settings and instance files are read at start: restart to apply a change.

A journal that was there and is now missing, empty or replaced is never started over
silently: stacker refuses (E_STORE) until the file is restored or --rebuild-journal is
given. Orders at the exchange that carry an instance's ids but that this journal did not
send stop trading (E_FOREIGN_ORDER: another stacker uses the key); see README, Exactly once.`,
    )
    .action(action(async () => (await import('./commands/run.ts')).run));

  program
    .command('check')
    .description('validate the configuration (every problem at once) and pre-flight each strategy instance against the market rules and balances, placing nothing')
    .option('--strategies <dir>', 'folder of strategy instance files, one NAME.env each (default: $STACKER_STRATEGIES_DIR, else config/strategies)')
    .option('--data-dir <dir>', 'where the journal lives (default: $STACKER_DATA_DIR, else ./data)')
    .option('--live', 'check as the live daemon would run (also needs STACKER_MODE=live): real balances instead of the paper wallet')
    .action(withGlobals(action(async () => (await import('./commands/check.ts')).check)));

  // Read-only journal commands: safe beside a running daemon (WAL lets readers and the writer proceed together).
  const journalWhere = (command: Command): Command =>
    command
      .option('--data-dir <dir>', 'the data dir the daemon uses (default: $STACKER_DATA_DIR, else ./data)')
      .option('--mode <mode>', 'which journal: live, dry-run or backtest (default: $STACKER_MODE, else dry-run)');
  const journalLoad = <F>(name: 'orders' | 'journal' | 'acknowledge' | 'resolveIntent' | 'migrate' | 'upgrade') =>
    withGlobals(action<F>(async () => (await import('./commands/journal.ts'))[name] as Run<F>));

  // A journal named by its path (the file `stacker backtest --journal` keeps) instead of a data dir's.
  const journalFile = (command: Command): Command =>
    command.option('--journal <file.db>', "use this SQLite journal file instead of the data dir's (e.g. one kept by `stacker backtest --journal`); not with --data-dir or --mode");
  journalFile(journalWhere(program.command('orders').description('list the orders the daemon placed, newest first, with fills, fee and logged transitions (read-only; safe beside a running daemon)')))
    .option('--instance <name>', 'only this strategy instance (its env file name without .env)')
    .option('--status <status>', `only orders in this status: ${ORDER_STATUSES.join(', ')}`)
    .option('--limit <n>', `at most this many orders, ${LIST_LIMIT.min} to ${LIST_LIMIT.max} (default: ${LIST_DEFAULT})`)
    .action(journalLoad('orders'));

  const journalCommand = journalFile(journalWhere(program.command('journal').description('show recent intents (buys, transfers, flex withdrawals, notes, refusals) and what became of each (read-only; its subcommands acknowledge, resolve, migrate and upgrade write)')))
    .option('--instance <name>', 'only this strategy instance (its env file name without .env)')
    .option('--status <status>', `only intents in these statuses, comma-separated: ${INTENT_STATUSES.join(', ')}`)
    .option('--limit <n>', `at most this many intents, ${LIST_LIMIT.min} to ${LIST_LIMIT.max} (default: ${LIST_DEFAULT})`)
    .action(journalLoad('journal'));
  // Each subcommand declares every option it takes, those it shares with `journal` too: the
  // listing's filters (--instance, --status, --limit) are not among them (checkInherited).
  journalFile(
    journalWhere(
      journalCommand
        .command('acknowledge')
        .description(
          "mark what reconciliation found at the exchange (orders adopted into the journal, orders another client placed with this stacker's ids) as seen by a human: /healthz is healthy again, and a daemon stopped by foreign orders may start",
        ),
    ),
  ).action(journalLoad('acknowledge'));
  journalFile(
    journalWhere(
      journalCommand
        .command('resolve')
        .description('settle by hand a transfer or flex withdrawal whose answer was lost (no lookup by id exists): after checking the balances at the exchange, say whether it happened')
        .requiredOption('--intent <id>', 'the intent id (`stacker journal --status unknown` lists them)')
        .requiredOption('--as <outcome>', 'done (it happened) or failed (it did not)'),
    ),
  ).action(journalLoad('resolveIntent'));
  journalWhere(
    journalCommand
      .command('migrate')
      .description(
        "copy the data dir's SQLite journal of a mode into PostgreSQL, in one transaction that verifies rows per table and the sums of money columns before it commits; idempotent (a second run copies nothing and says so). Stop the daemon first: both journals are locked while it runs",
      )
      .option('--to <url>', 'the PostgreSQL database, postgres://user@host/database, without a password (default: $STACKER_DATABASE_URL, which keeps a password out of the shell history; one given here is warned of)'),
  ).action(journalLoad('migrate'));
  journalWhere(
    journalCommand
      .command('backup')
      .description(
        "copy a mode's SQLite journal consistently while the daemon runs (SQLite's online backup, which waits out its writes; a cp of a journal being written may be torn), to a new file readable by you alone, checked before it is called done. Put it back only with the daemon stopped",
      )
      .requiredOption('--to <file.db>', 'the new file to write the copy to, e.g. /data/stacker-2026-11-28.db'),
  ).action(withGlobals(action(async () => (await import('./commands/journal-backup.ts')).backup)));
  journalWhere(
    journalCommand
      .command('upgrade')
      .description(
        "migrate a mode's journal (SQLite or PostgreSQL) to this stacker's schema as the daemon's start would, keeping a copy of a SQLite file as it was (stacker.db.schema-N.bak), and trade nothing: read it with the new build before it trades. One-way: an older stacker refuses the journal afterwards. Stop the daemon first: refused while one holds the journal",
      ),
  ).action(journalLoad('upgrade'));

  const backtestCommand = program
    .command('backtest')
    .description('replay real candles through the strategies in virtual time on a simulated account; print a summary, --json the report')
    .requiredOption('--data <file.csv>', 'candles: time,open,high,low,close,volume (time = open, Unix seconds), e.g. data/BTCUSDT_1h_binance_2017-08-17_2024-04-21.csv; a pipe works too: --data <(xzcat candles.csv.xz)')
    .requiredOption('--market <market>', 'the market the candles belong to, e.g. BTC_USDT')
    .option('--from <time>', 'first candle: 2024-01-31, 2024-01-31T09:00:00Z or Unix seconds (default: the file\'s first)')
    .option('--to <time>', 'last candle, same forms; a date alone means through the end of that day, UTC (default: the file\'s last)')
    .option('--strategy <file.env>', 'a strategy instance file; repeat to compare several side by side (each on its own copy of the wallet)', (value: string, all: string[]) => [...all, value], [] as string[])
    .option('--together', 'run several --strategy files on one shared wallet, as the daemon runs them, instead of side by side')
    .option('--sweep <KEY=v1,v2>', 'run the (one) strategy file once per value of KEY and compare; repeat for a cross product (at most 64 runs); a comma inside a value is written \\, (SCHEDULE=0 9 * * 1\\,4)', (value: string, all: string[]) => [...all, value], [] as string[])
    .option('--wallet <pairs>', 'starting trade balance, TICKER=amount pairs', 'USDT=10000')
    .option('--slippage-pct <pct>', 'added to the fill price (percent)', '0')
    .option('--flex <pair>', 'a flex investment to start with, e.g. USDT=1000 (sweepable with flex-sweep TICKER=USDT)')
    .option('--flex-apr <pct>', 'yearly interest of --flex, credited daily (percent; default 5)')
    .option('--report <file.html>', 'also write a self-contained HTML report with charts')
    .option('--journal <file.db>', 'keep the backtest journal in this new SQLite file, refused if it exists (default: in memory); `stacker orders --journal FILE` and `stacker journal --journal FILE` read it')
    .option('--rules <exchange|file.json>', "the market's rules: exchange (fetch the exchange's markets, cached in the data dir) or a file printed by `stacker markets --json` (default: the flags below, else demo rules, BTC_USDT and ETH_USDT only)")
    .option('--data-dir <dir>', 'where --rules exchange caches the markets list (default: $STACKER_DATA_DIR, else ./data)');
  for (const rule of RULE_FLAGS) backtestCommand.option(`${rule.flag} <${rule.arg}>`, `market rule: ${rule.help}`);
  backtestCommand
    .addHelpText(
      'after',
      `
Fill rule: a market buy in a slot fills at the OPEN of the first candle whose open time is at
or after the slot time, plus --slippage-pct, with the market's taker fee; precision and
min/max rules as live. The same input always gives a byte-identical --json report.
Several --strategy files, or --sweep, run one backtest each (in worker threads when there are
several CPUs) and print one comparison: return, average cost, drawdown, orders, refusals.

Market rules, the first found: --rules FILE (the output of \`stacker markets --json\`) or
--rules exchange; else the rule flags, when all of these are given:
  ${RULE_FLAGS.filter((r) => r.required).map((r) => r.flag).join(' ')}
else stacker's made-up demo rules (BTC_USDT and ETH_USDT only). A rule flag also overrides
its field of any source. Nothing is fetched without --rules exchange; when the exchange
cannot be reached, the list cached in the data dir is used and its age said. The report
says where the rules came from.`,
    )
    .action(action(async () => (await import('./commands/backtest.ts')).backtest));

  journalFile(
    program
      .command('report')
      .description('what the journal says was bought, per market: average cost (fees in), value at the last price now, P&L; --csv every filled order')
      .option('--data-dir <dir>', 'the data dir the daemon uses (default: $STACKER_DATA_DIR, else ./data)')
      .option('--mode <mode>', 'which journal: live, dry-run or backtest (default: $STACKER_MODE, else dry-run)'),
  )
    .option('--instance <name>', 'only this strategy instance')
    .option('--account <name>', 'only the orders sent on this account (as journalled with each order: ACCOUNT= of its instance then; default for instances without one)')
    .option('--from <time>', 'only orders the exchange took from then: 2025-01-01, 2025-01-01T09:00:00Z or Unix seconds (a date: from its first moment, UTC)')
    .option('--to <time>', 'only orders the exchange took up to then, same forms (a date: through its last moment, UTC): --from 2025-01-01 --to 2025-12-31 is the year')
    .option('--csv', 'one line per filled order (time, market, side, base, quote, price, fee, fee asset, order id, clientOrderId), for a tax tool; time is when the exchange took the order (from a backtest --journal: the slot, its price the open it filled at)')
    .option('--html <file.html>', 'also write a self-contained HTML page: per market, every buy, the average cost as it grew and the quote invested, charted')
    .action((flags: object, command: Command) =>
      action(async () => (await import('./commands/report.ts')).report)({ ...flags, envFile: command.optsWithGlobals<GlobalFlags>().envFile }, command),
    );

  const strategiesCommand = program
    .command('strategies')
    .description('list the strategies and the keys of their instance files')
    .action(action(async () => (await import('./commands/strategies.ts')).strategies));
  strategiesCommand
    .command('describe')
    .description("print a strategy's commented example instance file (save it under config/strategies/)")
    .argument('<name>', 'strategy name, e.g. dca')
    .action((name: string, flags: unknown, command: Command) =>
      action(async () => async (ctx: CommandContext, f: unknown) => (await import('./commands/strategies.ts')).describeStrategy(ctx, f, name))(flags, command),
    );

  program
    .command('ping')
    .description('check that the exchange answers (public)')
    .action(action(async () => (await import('./commands/market-data.ts')).ping));

  program
    .command('markets')
    .description('list markets and their trading rules (public)')
    .option('--market <market>', 'only this market, e.g. BTC_USDT')
    .action(action(async () => (await import('./commands/market-data.ts')).markets));

  program
    .command('ticker')
    .description("show a market's last price and 24 h volumes (public)")
    .requiredOption('--market <market>', 'market, e.g. BTC_USDT')
    .action(action(async () => (await import('./commands/market-data.ts')).ticker));

  program
    .command('balance')
    .description('show the main balance, or with --trade the spot (trade) balance')
    .option('--ticker <ticker>', 'only this asset, e.g. BTC')
    .option('--trade', 'the trade (spot) balance that orders spend, instead of the main balance')
    .option('--account <name>', ACCOUNT_HELP)
    .action(action(async () => (await import('./commands/balance.ts')).balance));

  program
    .command('codes')
    .description("list the account's codes (code values masked unless --reveal)")
    .option('--limit <n>', 'page size, 1 to 100 (with --all: size of each page fetched)')
    .option('--offset <n>', 'index of the first code, 0 to 10000')
    .option('--all', 'fetch every page')
    .option('--reveal', 'print code values in full (they redeem money: mind your terminal and logs)')
    .option('--account <name>', ACCOUNT_HELP)
    .action(action(async () => (await import('./commands/codes.ts')).codes));

  const flex = program.command('flex').description('flexible lending (Smart Flex): plans, investments, withdrawals');
  flex
    .command('plans')
    .description('list flex plans')
    .option('--ticker <ticker>', 'only plans for this asset')
    .option('--account <name>', ACCOUNT_HELP)
    .action(action(async () => (await import('./commands/flex.ts')).flexPlans));
  flex
    .command('investments')
    .description('list your flex investments')
    .option('--ticker <ticker>', 'only investments in this asset')
    .option('--plan <id>', 'only investments in this plan')
    .option('--account <name>', ACCOUNT_HELP)
    .action(action(async () => (await import('./commands/flex.ts')).flexInvestments));
  flex
    .command('withdraw')
    .description('withdraw an amount from a flex investment back to the main balance (never retried once it may have been taken)')
    .requiredOption('--plan <id>', 'the plan to withdraw from')
    .requiredOption('--amount <decimal>', 'amount to withdraw, e.g. 10.5')
    .option('--account <name>', ACCOUNT_HELP)
    .action(action(async () => (await import('./commands/flex.ts')).flexWithdraw));

  program
    .command('buy')
    .description('buy an exact base quantity at market (stock market order; never retried once it may have been taken)')
    .requiredOption('--market <market>', 'market, e.g. BTC_USDT')
    .requiredOption('--amount <decimal>', "base quantity to buy, e.g. 0.0005 BTC: within the market's amount precision (decimals) and at least its minimum amount (stacker markets), else refused before sending")
    .option(
      '--client-order-id <id>',
      "your id for the order: letters, digits, - . _ (default: generated, printed). The exchange takes a second market order under an id it already holds, so stacker refuses (exit 2) an id it sent from this machine with the key (kept 31 days in STACKER_LOCK_DIR, in any letter case) or that an order in the order history already has: running the same command again never buys twice, though the history may show an order placed elsewhere seconds ago only later",
    )
    .option('--stp <mode>', 'self-trade prevention: no, cb (cancel both), cn (cancel new) or co (cancel old); the long forms cancel_both/cancel_new/cancel_old are read too and sent short (default: the exchange default, no)')
    .option('--account <name>', ACCOUNT_HELP)
    .action(action(async () => (await import('./commands/trade.ts')).buy));

  program
    .command('order')
    .description('look an order up by client order id in the order history and active orders')
    .requiredOption('--client-order-id <id>', 'the client order id')
    .option('--market <market>', 'only this market')
    .option('--account <name>', ACCOUNT_HELP)
    .action(action(async () => (await import('./commands/trade.ts')).order));

  return program;
}

/**
 * For commands that read global flags as their own (--env-file, --base-url, --region) and their
 * parent's (`journal acknowledge --data-dir D` gives --data-dir to `journal`): the command's own
 * flags win.
 */
function withGlobals<F>(run: (flags: F, command: Command) => Promise<void>): (flags: F, command: Command) => Promise<void> {
  return (flags, command) => run({ ...(command.optsWithGlobals() as F), ...flags }, command);
}

/** `flex withdraw` for the `withdraw` command under `flex`. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current?.parent; current = current.parent) names.unshift(current.name());
  return names.join(' ');
}

/** The env file's secrets are readable by other users: a warning, and the command runs on (a file it cannot read is its own error). */
async function warnOfReadableEnvFile(envFile: string, io: Io): Promise<void> {
  const [{ readEnvLayers }, { envFileExposureNote }] = await Promise.all([import('../config/settings.ts'), import('../config/env-file-exposure.ts')]);
  const note = await readEnvLayers(envFile, {}, 'keep').then(envFileExposureNote, () => null);
  if (note !== null) io.err(`warning: ${note}\n`);
}
