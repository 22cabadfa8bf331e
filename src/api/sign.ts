import { createHmac } from 'node:crypto';

export interface SignedRequest {
  /** The exact bytes sent as the body; the payload header is their base64. */
  readonly body: string;
  readonly headers: {
    readonly 'content-type': 'application/json';
    readonly 'x-txc-apikey': string;
    readonly 'x-txc-payload': string;
    readonly 'x-txc-signature': string;
  };
}

/**
 * Sign a private request as docs/exchange-api.md §2 says: the body carries `request` (the path)
 * and `nonce` first, then the parameters; the payload is the base64 of those exact JSON bytes;
 * the signature is hex HMAC-SHA512 of the payload (the base64 text, not the JSON) keyed by the
 * secret. Pure: same input, same bytes.
 */
export function signRequest(
  path: string,
  nonce: string,
  params: Readonly<Record<string, unknown>>,
  apiKey: string,
  apiSecret: string,
  nonceWindow: boolean,
): SignedRequest {
  const body = JSON.stringify({ request: path, nonce, ...(nonceWindow ? { nonceWindow: true } : {}), ...params });
  const payload = Buffer.from(body, 'utf8').toString('base64');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-txc-apikey': apiKey,
      'x-txc-payload': payload,
      'x-txc-signature': signPayload(payload, apiSecret),
    },
  };
}

export function signPayload(payload: string, apiSecret: string): string {
  return createHmac('sha512', apiSecret).update(payload).digest('hex');
}
