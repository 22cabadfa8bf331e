import type { InputProblem } from '../domain/errors.ts';
import type { Intent } from '../domain/intent.ts';
import type { CandleWindow } from './candle-book.ts';
import { STRATEGY_API_VERSION, type SlotView, type SnapshotPart, type StartupContext, type Strategy } from './contract.ts';
import { type ParamShape, type ParamsOf, checkDeclaration, marketKeysOf, parseDeclared, specsOf } from './param-spec.ts';
import { readOnly } from './read-only.ts';

/**
 * A strategy as its author writes it (contract 2): the params are declared once (`param.*`),
 * and `decide` gets them parsed and typed. Everything the engine and the CLI need besides the
 * decision is derived from the declaration.
 */
export interface StrategyDefinition<S extends ParamShape> {
  /** Kebab-case; the value of STRATEGY= in an instance env file. */
  readonly name: string;
  /** One sentence for `stacker strategies` and the README. */
  readonly describe: string;
  readonly params: S;
  /**
   * Rules across keys (give AMOUNT or AMOUNT_QUOTE, not both): report each with the key it is
   * about. Runs with the others, so every problem shows at once: a key that read badly holds a
   * placeholder, and `given` tells a key set in the file from one absent.
   */
  check?(params: ParamsOf<S>, problem: (key: keyof S & string, rule: string) => void, given: (key: keyof S & string) => boolean): void;
  /**
   * Start-time checks against the exchange's markets; every problem, field = the key. That the
   * exchange lists each param.market value is checked first, for every strategy: this runs only
   * once they all are, so it may read their rules without looking.
   */
  checkParams?(params: ParamsOf<S>, context: StartupContext, source: string): readonly InputProblem[];
  /** The asset budgets and MAX_ORDER_QUOTE count in (the quote of the market it buys); absent: it places no orders. */
  budgetAsset?(params: ParamsOf<S>): string | null;
  /** The snapshot parts `decide` reads; DEFAULT_READS when absent. */
  reads?(params: ParamsOf<S>): readonly SnapshotPart[];
  /** With `candles` in reads: which market's hourly candles, how far back. */
  candleWindows?(params: ParamsOf<S>): readonly CandleWindow[];
  /** The decision for one slot. Pure: reads the view only. */
  decide(view: SlotView, params: ParamsOf<S>): Promise<readonly Intent[]>;
}

export function defineStrategy<S extends ParamShape>(definition: StrategyDefinition<S>): Strategy<ParamsOf<S>> {
  const { params: shape, check, checkParams, ...rest } = definition;
  checkDeclaration(definition.name, shape);
  const marketKeys = marketKeysOf(shape);
  return {
    ...rest,
    version: STRATEGY_API_VERSION,
    params: specsOf(shape),
    parseParams: (env, source) => parseDeclared(shape, env, source, check),
    markets: (params) => {
      const named: Record<string, string> = {};
      for (const key of marketKeys) {
        const name = (params as Readonly<Record<string, unknown>>)[key];
        if (typeof name === 'string') named[key] = name;
      }
      return named;
    },
    // The rule param.market shows ("that the exchange lists") holds whether or not the author
    // wrote a check: a market the exchange does not list would run every slot and buy nothing.
    checkParams: (params, context, source) => {
      const unlisted: InputProblem[] = [];
      for (const key of marketKeys) {
        const name = (params as Readonly<Record<string, unknown>>)[key];
        if (typeof name === 'string' && context.market(name) === undefined) unlisted.push({ source, field: key, rule: context.unlisted(name) });
      }
      if (unlisted.length > 0) return unlisted;
      if (checkParams === undefined) return [];
      // The rules are the ones the exchange (a backtest's sim) keeps using: read-only here too.
      const guarded: StartupContext = {
        market: (name) => {
          const rules = context.market(name);
          return rules === undefined ? undefined : readOnly(rules, 'market rules');
        },
        marketNames: () => context.marketNames(),
        unlisted: (name) => context.unlisted(name),
      };
      return checkParams(params, guarded, source);
    },
  };
}
