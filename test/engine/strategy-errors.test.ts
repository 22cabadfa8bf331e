import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/money.ts';
import { preflight } from '../../src/engine/preflight.ts';
import { defineStrategy, intent, param } from '../../strategies/sdk.ts';
import { eachEngineWorld, runtimeOf } from './harness.ts';

// What a strategy's author reads when their strategy fails: the daemon's log line carries the
// error's stack, so a bug says where it is (the journal and /healthz keep the one-line reason),
// and a write into the params says that they are read-only, for which instance, and which key.
const SLOT = Date.UTC(2026, 10, 22, 9, 0, 0);

const current = eachEngineWorld();

/** A helper of the strategy's own module with a bug in it. */
function averageOf(closes: readonly Decimal[] | undefined): Decimal {
  return (closes as readonly Decimal[]).reduce((sum, close) => sum.add(close), new Decimal(0));
}

const buggy = defineStrategy({
  name: 'buggy',
  describe: 'Reads a list it never had.',
  params: {},
  reads: () => [],
  decide: async () => {
    averageOf(undefined);
    return [];
  },
});

const doubling = defineStrategy({
  name: 'doubling',
  describe: 'Doubles its AMOUNT_QUOTE every slot.',
  params: { AMOUNT_QUOTE: param.decimal({ positive: true, description: 'Quote per slot.', example: '10' }) },
  reads: () => [],
  decide: async (_view, params) => {
    (params as { AMOUNT_QUOTE: Decimal }).AMOUNT_QUOTE = params.AMOUNT_QUOTE.mul(2);
    return [];
  },
});

describe('a strategy that throws', () => {
  it("is logged with the error's stack, the strategy's file and line in it; the journal and /healthz keep the one-line reason", async () => {
    const engine = current().engine([runtimeOf({ instance: 'buggy-1', strategy: buggy, env: {} })]);
    expect(await engine.runSlot('buggy-1', SLOT)).toBe('disabled');
    const line = current().logs.find((entry) => entry.fields['event'] === 'strategy-disabled');
    expect(line?.fields).toMatchObject({ instance: 'buggy-1', error: "Cannot read properties of undefined (reading 'reduce')" });
    const stack = String(line?.fields['stack']);
    expect(stack).toMatch(/^TypeError: Cannot read properties of undefined \(reading 'reduce'\)\n\s+at averageOf \(.*strategy-errors\.test\.ts:\d+:\d+\)/);
    const reason = "strategy buggy failed: Cannot read properties of undefined (reading 'reduce')";
    expect(await current().journal.getSlot({ instance: 'buggy-1', slotTimeMs: SLOT })).toMatchObject({ status: 'failed', reason });
    expect(engine.health().disabledInstances).toEqual([{ instance: 'buggy-1', slotTimeMs: SLOT, reason }]);
  });

  it('tells the notifier once: the instance stops trading, which the operator must hear of without watching /healthz', async () => {
    const engine = current().engine([runtimeOf({ instance: 'buggy-1', strategy: buggy, env: {} })]);
    expect(await engine.runSlot('buggy-1', SLOT)).toBe('disabled');
    expect(await engine.runSlot('buggy-1', SLOT + 3_600_000)).toBe('disabled');
    expect(current().notifications).toEqual([
      { kind: 'strategy-disabled', atMs: expect.any(Number), mode: 'live', instance: 'buggy-1', strategy: 'buggy', slotTimeMs: SLOT, error: "Cannot read properties of undefined (reading 'reduce')" },
    ]);
  });
});

describe('a strategy whose error quotes a code it read', () => {
  const parsing = defineStrategy({
    name: 'parsing',
    describe: 'Parses its first code as JSON.',
    params: {},
    reads: () => ['codes'],
    decide: async (view) => {
      JSON.parse(view.codes()[0]?.code ?? '');
      return [];
    },
  });

  it('masks it wherever the error goes: the log and its stack, the journal, the notification', async () => {
    const engine = current().engine([runtimeOf({ instance: 'p', strategy: parsing, env: {} })]);
    expect(await engine.runSlot('p', SLOT)).toBe('disabled');
    const line = current().logs.find((entry) => entry.fields['event'] === 'strategy-disabled');
    const slot = await current().journal.getSlot({ instance: 'p', slotTimeMs: SLOT });
    const told = JSON.stringify(current().notifications);
    const everything = `${JSON.stringify(line)}${slot?.reason ?? ''}${told}`;
    expect(String(line?.fields['error'])).toMatch(/^Unexpected token 'W', "\*+"\.\.\. is not valid JSON$/);
    // Not the quoted ten characters, nor any run of six of them.
    expect(everything).not.toMatch(/WB[0-9A-F]{4}/);
    expect(told).toContain('strategy-disabled');
  });

  it('masks it in a refusal or a note the strategy returns instead of throwing, as the SDK asks', async () => {
    const refusing = defineStrategy({
      name: 'refusing',
      describe: 'Refuses with the parse error of its first code.',
      params: {},
      reads: () => ['codes'],
      decide: async (view) => {
        const code = view.codes()[0]?.code ?? '';
        try {
          JSON.parse(code);
          return [];
        } catch (error) {
          return [intent.refuse('bad-code', `could not read a code: ${(error as Error).message}`, { code }), intent.note(`the code was ${code}`)];
        }
      },
    });
    const engine = current().engine([runtimeOf({ instance: 'r', strategy: refusing, env: {} })]);
    expect(await engine.runSlot('r', SLOT)).toBe('done');
    const journalled = JSON.stringify(await current().journal.listIntents({ instance: 'r' }));
    const logged = JSON.stringify(current().logs);
    expect(`${journalled}${logged}${JSON.stringify(current().notifications)}`).not.toMatch(/WB[0-9A-F]{4}/);
    expect(journalled).toContain('could not read a code: Unexpected token');
  });
});

describe('a strategy that writes into its params', () => {
  const says = 'params of dbl are read-only: the strategy tried to set AMOUNT_QUOTE';

  it('fails saying the params are read-only, naming the instance and the key', async () => {
    const engine = current().engine([runtimeOf({ instance: 'dbl', strategy: doubling, env: { AMOUNT_QUOTE: '10' } })]);
    expect(await engine.runSlot('dbl', SLOT)).toBe('disabled');
    expect((await current().journal.getSlot({ instance: 'dbl', slotTimeMs: SLOT }))?.reason).toMatch(new RegExp(`^strategy doubling failed: ${says}; copy`));
  });

  it('is told so by stacker check too', async () => {
    const runtime = runtimeOf({ instance: 'dbl', strategy: doubling, env: { AMOUNT_QUOTE: '10' } });
    const [result] = await preflight({ mode: 'live', instances: [{ ...runtime, enabled: true }] }, current().deps().exchange, SLOT);
    expect(result?.problems).toEqual([expect.stringContaining(says)]);
  });
});
