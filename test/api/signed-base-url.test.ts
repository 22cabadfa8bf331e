import { describe, expect, it } from 'vitest';
import { resolveBaseUrl, resolveSignedBaseUrl } from '../../src/api/base-url.ts';
import { ConfigError } from '../../src/domain/errors.ts';

/**
 * Where signed requests may go: https:// anywhere, plain http:// only to this machine (the
 * sandbox on 127.0.0.0/8, ::1 or localhost). Elsewhere the key, the signed payloads and the
 * account's answers would cross the network in clear: refused before anything is sent, naming
 * the setting that chose the endpoint, unless STACKER_ALLOW_PLAIN_HTTP opts a lab network in.
 */
const BY_FLAG = { allowPlainHttp: false, setting: { field: '--base-url' } };
const BY_ENV = { allowPlainHttp: false, setting: { field: 'STACKER_BASE_URL', source: 'env file prod.env' } };

function refusal(endpoint: string, options = BY_FLAG): ConfigError {
  try {
    resolveSignedBaseUrl(endpoint, options);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`${endpoint} was taken`);
}

describe('the origin of signed requests', () => {
  it('is any https:// origin or region, and plain http:// to this machine', () => {
    for (const endpoint of ['global', 'eu', 'https://whitebit.com', 'https://10.0.0.5:8443', 'http://127.0.0.1:8787', 'http://127.9.8.7', 'http://[::1]:8787', 'http://localhost:8787', 'http://LOCALHOST', 'http://[::ffff:127.0.0.1]:8787', 'http://[::ffff:7f00:1]']) {
      expect(resolveSignedBaseUrl(endpoint, BY_FLAG)).toBe(resolveBaseUrl(endpoint));
    }
  });

  it('is never plain http:// to another machine: a ConfigError naming the setting given, the host and the rule', () => {
    for (const [endpoint, host] of [
      ['http://whitebit.com', 'whitebit.com'],
      ['http://192.0.2.2:42409', '192.0.2.2'],
      ['http://10.0.0.5', '10.0.0.5'],
      ['http://[2001:db8::1]:8787', '[2001:db8::1]'],
      ['http://sandbox:8787', 'sandbox'],
      ['http://localhost.example', 'localhost.example'],
    ] as const) {
      const error = refusal(endpoint);
      expect(error.code).toBe('E_CONFIG');
      expect(error.problems).toEqual([
        {
          field: '--base-url',
          rule:
            `is plain http:// to ${host}, which is not this machine: signed requests and account answers would cross the network in clear; use https:// ` +
            '(plain http is for a sandbox on this machine: 127.0.0.1, [::1] or localhost; on a lab network of your own, STACKER_ALLOW_PLAIN_HTTP=1 allows it)',
        },
      ]);
    }
    expect(refusal('http://whitebit.com', BY_ENV).message).toMatch(/^env file prod\.env: STACKER_BASE_URL: is plain http:\/\/ to whitebit\.com, /);
  });

  it('takes 127.0.0.0/8 mapped into IPv6 for this machine, and no other mapped address', () => {
    expect(resolveSignedBaseUrl('http://[::ffff:127.0.0.1]:8787', BY_FLAG)).toBe('http://[::ffff:7f00:1]:8787');
    expect(refusal('http://[::ffff:10.0.0.1]', BY_FLAG).message).toMatch(/is plain http:\/\/ to \[::ffff:a00:1\], which is not this machine/);
  });

  it('is plain http:// to another machine when STACKER_ALLOW_PLAIN_HTTP allows it (a lab network)', () => {
    expect(resolveSignedBaseUrl('http://sandbox:8787', { ...BY_ENV, allowPlainHttp: true })).toBe('http://sandbox:8787');
  });

  it("leaves public market data alone: resolveBaseUrl still takes plain http:// anywhere (nothing is signed)", () => {
    expect(resolveBaseUrl('http://sandbox:8787')).toBe('http://sandbox:8787');
  });
});
