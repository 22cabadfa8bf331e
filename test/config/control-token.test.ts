import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadDaemonConfig } from '../../src/config/daemon-config.ts';
import { EXIT, exitCodeFor } from '../../src/domain/errors.ts';
import { ConfigWorld, DCA, configErrorOf } from './helpers.ts';

let world: ConfigWorld;
beforeEach(() => {
  world = new ConfigWorld();
  world.instance('dca-btc', DCA);
});
afterEach(() => world.cleanup());

const TOKEN = 'ctl_0123456789abcdef_TOKEN';

describe('STACKER_CONTROL_TOKEN: the bearer token of the status API controls', () => {
  it('is off (null) when unset', async () => {
    const config = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: {} });
    expect(config.controlToken).toBeNull();
  });

  it('matches the configured token only, and never shows it in JSON or inspect', async () => {
    const config = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_CONTROL_TOKEN: TOKEN } });
    const token = config.controlToken;
    expect(token?.matches(TOKEN)).toBe(true);
    expect(token?.matches(`${TOKEN}x`)).toBe(false);
    expect(token?.matches(TOKEN.slice(0, -1))).toBe(false);
    expect(token?.matches('')).toBe(false);
    expect(JSON.stringify(config)).not.toContain(TOKEN);
    expect(inspect(config, { depth: 10 })).not.toContain(TOKEN);
  });

  it('refuses a short token or one with spaces with exit 2, naming the key and the rule, never the value', async () => {
    for (const weak of ['short-token', 'a token with spaces in it']) {
      const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_CONTROL_TOKEN: weak } }));
      expect(exitCodeFor(error)).toBe(EXIT.badInput);
      expect(error.message).toContain('STACKER_CONTROL_TOKEN');
      expect(error.message).toContain('at least 16 characters of printable ASCII without spaces');
      expect(error.message).not.toContain(weak);
    }
  });

  it('refuses a long token of a few characters repeated (a placeholder, a pattern), naming the rule, never the value', async () => {
    for (const pattern of ['0000000000000000', 'abababababababababababab', '1234512345123451234512345']) {
      const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_CONTROL_TOKEN: pattern } }));
      expect(exitCodeFor(error)).toBe(EXIT.badInput);
      expect(error.message).toContain('STACKER_CONTROL_TOKEN');
      expect(error.message).toContain('at least 6 different characters');
      expect(error.message).not.toContain(pattern);
    }
    const config = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_CONTROL_TOKEN: '123456123456123456' } });
    expect(config.controlToken?.matches('123456123456123456')).toBe(true);
  });
});
