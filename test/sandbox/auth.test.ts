import { afterEach, describe, expect, it } from 'vitest';
import { signPayload } from '../../src/api/sign.ts';
import { Harness, PATHS, manualClock } from './helpers.ts';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const UNAUTHORIZED_KEY = { code: 2, message: 'This action is unauthorized. Enable your key in API settings', errors: {} };
const BAD_SIGNATURE = { code: 10, message: 'Unauthorized request.', errors: {} };
const INVALID_PAYLOAD = { code: 9, message: 'Invalid payload.', errors: {} };
const NONCE_REFUSED = { code: 0, errors: {}, message: 'Too many requests.' };

/** Sign an arbitrary body text with the sandbox's secret, as a careless client might. */
function signedText(h: Harness, body: string): Record<string, string> {
  const payload = Buffer.from(body, 'utf8').toString('base64');
  return {
    'content-type': 'application/json',
    'x-txc-apikey': h.sandbox.apiKey,
    'x-txc-payload': payload,
    'x-txc-signature': signPayload(payload, h.sandbox.apiSecret),
  };
}

describe('request authentication', () => {
  it('accepts a correctly signed request', async () => {
    harness = await Harness.start();
    const reply = await harness.post(PATHS.mainBalance, { ticker: 'USDT' });
    expect([reply.status, reply.json]).toEqual([200, { main_balance: '10000' }]);
  });

  it('refuses a request without the API key header with 401', async () => {
    harness = await Harness.start();
    const reply = await harness.post(PATHS.mainBalance, {}, {
      tamper: ({ body, headers }) => {
        const { 'x-txc-apikey': _dropped, ...rest } = headers;
        return { body, headers: rest };
      },
    });
    expect([reply.status, reply.json]).toEqual([401, UNAUTHORIZED_KEY]);
  });

  it('refuses an unknown key with 401 "This action is unauthorized. Enable your key in API settings"', async () => {
    harness = await Harness.start();
    const reply = await harness.post(PATHS.mainBalance, {}, { apiKey: 'not-a-key' });
    expect([reply.status, reply.json]).toEqual([401, UNAUTHORIZED_KEY]);
  });

  it('refuses a missing payload header with 400 "Payload not provided."', async () => {
    harness = await Harness.start();
    const reply = await harness.post(PATHS.mainBalance, {}, {
      tamper: ({ body, headers }) => {
        const { 'x-txc-payload': _dropped, ...rest } = headers;
        return { body, headers: rest };
      },
    });
    expect([reply.status, reply.json]).toEqual([400, { code: 9, message: 'Payload not provided.', errors: {} }]);
  });

  it('refuses a missing or wrong signature with 401 code 10 "Unauthorized request."', async () => {
    harness = await Harness.start();
    const missing = await harness.post(PATHS.mainBalance, {}, {
      tamper: ({ body, headers }) => {
        const { 'x-txc-signature': _dropped, ...rest } = headers;
        return { body, headers: rest };
      },
    });
    expect([missing.status, missing.json]).toEqual([401, BAD_SIGNATURE]);
    const wrongSecret = await harness.post(PATHS.mainBalance, {}, { apiSecret: 'some-other-secret' });
    expect([wrongSecret.status, wrongSecret.json]).toEqual([401, BAD_SIGNATURE]);
  });

  it('refuses a payload header that is not the base64 of the body with 400 code 9', async () => {
    harness = await Harness.start();
    const reply = await harness.post(PATHS.mainBalance, {}, {
      tamper: ({ body, headers }) => ({ body: body.replace('}', ',"ticker":"BTC"}'), headers }),
    });
    expect([reply.status, reply.json]).toEqual([400, INVALID_PAYLOAD]);
  });

  it('refuses spaced (pretty-printed) JSON even when payload and signature match it', async () => {
    harness = await Harness.start();
    const body = JSON.stringify({ request: PATHS.mainBalance, nonce: harness.nextNonce(), nonceWindow: true }, null, 2);
    const reply = await harness.raw(PATHS.mainBalance, body, signedText(harness, body));
    expect([reply.status, reply.json]).toEqual([400, INVALID_PAYLOAD]);
    // Spaces inside string values are data, not formatting.
    const spacedValue = JSON.stringify({ request: PATHS.mainBalance, nonce: harness.nextNonce(), nonceWindow: true, ticker: 'NO SUCH' });
    const ok = await harness.raw(PATHS.mainBalance, spacedValue, signedText(harness, spacedValue));
    expect([ok.status, ok.json]).toEqual([200, { main_balance: '0' }]);
  });

  it('refuses a body that is not a JSON object with 400', async () => {
    harness = await Harness.start();
    for (const body of ['not json', '[1,2]', '"text"']) {
      const reply = await harness.raw(PATHS.mainBalance, body, signedText(harness, body));
      expect([reply.status, reply.json]).toEqual([400, INVALID_PAYLOAD]);
    }
  });

  it('refuses a body whose `request` is another path, or has none', async () => {
    harness = await Harness.start();
    const other = await harness.post(PATHS.mainBalance, {}, {
      tamper: () => {
        const body = JSON.stringify({ request: PATHS.tradeBalance, nonce: harness!.nextNonce() });
        return { body, headers: signedText(harness!, body) };
      },
    });
    expect([other.status, other.json]).toEqual([400, INVALID_PAYLOAD]);
    const body = JSON.stringify({ nonce: harness.nextNonce() });
    const none = await harness.raw(PATHS.mainBalance, body, signedText(harness, body));
    expect([none.status, none.json]).toEqual([400, { code: 9, message: 'Request not provided.', errors: {} }]);
  });

  it('refuses a missing nonce and a non-boolean nonceWindow with their messages', async () => {
    harness = await Harness.start();
    const noNonce = JSON.stringify({ request: PATHS.mainBalance });
    expect((await harness.raw(PATHS.mainBalance, noNonce, signedText(harness, noNonce))).json).toEqual({ code: 0, message: 'Nonce not provided.', errors: {} });
    const badFlag = JSON.stringify({ request: PATHS.mainBalance, nonce: harness.nextNonce(), nonceWindow: 'yes' });
    expect((await harness.raw(PATHS.mainBalance, badFlag, signedText(harness, badFlag))).json).toEqual({ code: 0, message: 'Invalid nonceWindow.', errors: {} });
  });

  it('never echoes the secret, the signature or the payload in any refusal', async () => {
    harness = await Harness.start();
    const replies = [
      await harness.post(PATHS.mainBalance, {}, { apiSecret: 'wrong' }),
      await harness.post(PATHS.mainBalance, {}, { apiKey: 'wrong' }),
      await harness.post(PATHS.mainBalance, {}, { tamper: ({ body, headers }) => ({ body: `${body} `, headers }) }),
    ];
    for (const reply of replies) {
      expect(reply.text).not.toContain(harness.sandbox.apiSecret);
      expect(reply.text.toLowerCase()).not.toMatch(/signature|payload"/);
    }
  });
});

describe('nonces with nonceWindow: true', () => {
  it('accepts ms timestamps within ±5 s in any order, each once', async () => {
    const clock = manualClock();
    harness = await Harness.start({ clock });
    const now = clock.nowMs();
    for (const nonce of [now, now - 4_000, now + 4_000, now - 1]) {
      expect((await harness.post(PATHS.mainBalance, {}, { nonce: String(nonce) })).status).toBe(200);
    }
  });

  it('refuses a replayed nonce with 429 and the JSON body "Too many requests."', async () => {
    const clock = manualClock();
    harness = await Harness.start({ clock });
    const nonce = String(clock.nowMs());
    expect((await harness.post(PATHS.mainBalance, {}, { nonce })).status).toBe(200);
    const replay = await harness.post(PATHS.mainBalance, {}, { nonce });
    expect([replay.status, replay.contentType, replay.json]).toEqual([429, 'application/json', NONCE_REFUSED]);
  });

  it('refuses a nonce more than 5 s old with 429 and the exchange message', async () => {
    const clock = manualClock();
    harness = await Harness.start({ clock });
    const stale = await harness.post(PATHS.mainBalance, {}, { nonce: String(clock.nowMs() - 5_001) });
    expect([stale.status, stale.json]).toEqual([429, { code: 0, errors: {}, message: 'Your nonce is more than 5 seconds lesser than the current nonce' }]);
  });

  it('refuses a nonce more than 5 s ahead, and one that is not a number', async () => {
    const clock = manualClock();
    harness = await Harness.start({ clock });
    // Ahead of the exchange's clock: the exchange's own wording for it (a client clock running fast).
    expect((await harness.post(PATHS.mainBalance, {}, { nonce: String(clock.nowMs() + 5_001) })).json).toEqual({ code: 0, errors: {}, message: 'Your nonce is more than 5 seconds greater than the current nonce' });
    expect((await harness.post(PATHS.mainBalance, {}, { nonce: 'abc' })).json).toEqual(NONCE_REFUSED);
  });

  it('does not spend a nonce on a request whose signature failed', async () => {
    const clock = manualClock();
    harness = await Harness.start({ clock });
    const nonce = String(clock.nowMs());
    expect((await harness.post(PATHS.mainBalance, {}, { nonce, apiSecret: 'wrong' })).status).toBe(401);
    expect((await harness.post(PATHS.mainBalance, {}, { nonce })).status).toBe(200);
  });
});

describe('nonces without nonceWindow', () => {
  it('accepts any strictly increasing integer', async () => {
    harness = await Harness.start();
    for (const nonce of ['1', '2', '10', '11']) {
      expect((await harness.post(PATHS.mainBalance, {}, { nonce, nonceWindow: false })).status).toBe(200);
    }
  });

  it('refuses an equal or decreasing nonce with 429 "Too many requests."', async () => {
    harness = await Harness.start();
    expect((await harness.post(PATHS.mainBalance, {}, { nonce: '100', nonceWindow: false })).status).toBe(200);
    const equal = await harness.post(PATHS.mainBalance, {}, { nonce: '100', nonceWindow: false });
    expect([equal.status, equal.json]).toEqual([429, NONCE_REFUSED]);
    const lower = await harness.post(PATHS.mainBalance, {}, { nonce: '99', nonceWindow: false });
    expect([lower.status, lower.json]).toEqual([429, NONCE_REFUSED]);
    expect((await harness.post(PATHS.mainBalance, {}, { nonce: '101', nonceWindow: false })).status).toBe(200);
  });

  it('accepts the nonce as a JSON integer too', async () => {
    harness = await Harness.start();
    const body = JSON.stringify({ request: PATHS.mainBalance, nonce: 1234 });
    expect((await harness.raw(PATHS.mainBalance, body, signedText(harness, body))).status).toBe(200);
  });
});
