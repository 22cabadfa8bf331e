import { describe, expect, it } from 'vitest';
import { runDemo } from '../../src/demo/walkthrough.ts';

describe('stacker demo (the README first command)', () => {
  it('walks through every operation against a real sandbox and ends with balanced books', async () => {
    const lines: string[] = [];
    await runDemo({ out: (line) => lines.push(line) });
    const text = lines.join('\n');
    expect(text).toContain('pong');
    expect(text).toMatch(/order \d+ FILLED: got 0\.001234 BTC for 80\.21 USDT, fee 0\.08021 USDT/);
    expect(text).toContain('history has 1 order(s) with that id');
    expect(text).toContain('balances equal the ledger sums: yes');
    expect(text).not.toMatch(/WB[0-9A-Z]{4,}-/); // codes stay masked
  });
});
