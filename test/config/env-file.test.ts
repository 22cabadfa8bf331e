import { describe, expect, it } from 'vitest';
import { parseEnvText } from '../../src/config/env-file.ts';
import { parseWallet } from '../../src/config/wallet.ts';

describe('parseEnvText', () => {
  it('parses exactly as dotenv does: quotes, export, comments, empty values', async () => {
    const { values, badLines } = await parseEnvText('# c\nA=1\nexport B="two words" # note\nC=\nD=\'x#y\'\n');
    expect(values).toEqual({ A: '1', B: 'two words', C: '', D: 'x#y' });
    expect(badLines).toEqual([]);
  });

  it('names every line dotenv skips silently: no "=", a bare word, a key with a blank', async () => {
    const { values, badLines } = await parseEnvText('A=1\nAMOUNT 0.5\nJUSTAWORD\n  # indented comment\nMY KEY=1\n\nB=2\r\nC 3\r\n');
    expect(values).toEqual({ A: '1', B: '2' });
    expect(badLines).toEqual([2, 3, 5, 8]);
  });

  it('does not blame the continuation lines of a multi-line quoted value', async () => {
    const { values, badLines } = await parseEnvText('KEY="-----BEGIN\nline two\n-----END"\nNEXT=1\n');
    expect(values).toEqual({ KEY: '-----BEGIN\nline two\n-----END', NEXT: '1' });
    expect(badLines).toEqual([]);
  });

  it('names every key set on more than one line, with its lines, and never a line inside a quoted value', async () => {
    const { duplicates } = await parseEnvText('AMOUNT=0.0005\nKEY="AMOUNT=7\nstill KEY"\n\n# again\n  export AMOUNT=5\nAMOUNT=6\nOTHER=1\n');
    expect(duplicates).toEqual([{ key: 'AMOUNT', lines: [1, 6, 7] }]);
  });

  it('treats an indented line after a value as a line of its own', async () => {
    const { badLines } = await parseEnvText('A=1\n   oops\n');
    expect(badLines).toEqual([2]);
  });
});

describe('parseWallet', () => {
  it('reads TICKER=amount pairs, blanks around commas and "=" allowed, zero allowed', () => {
    const parsed = parseWallet(' USDT = 1000.50 ,BTC=0');
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect([...parsed.wallet].map(([t, a]) => `${t}:${a.toString()}`)).toEqual(['USDT:1000.5', 'BTC:0']);
  });

  it('refuses exponents, signs and floats written as words', () => {
    const parsed = parseWallet('USDT=1e3,BTC=+1,ETH=.5');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.rules).toHaveLength(3);
  });
});
