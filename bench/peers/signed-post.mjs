// What every peer bot does once per tick: one signed POST (HTTP API v4: base64 JSON payload,
// HMAC-SHA512 signature in hex) and the JSON answer read. Plain JavaScript: a peer is the
// smallest program a person would write for the job, not stacker's code.
import { createHmac } from 'node:crypto';
import { request } from 'undici';

const { PEER_URL: url, PEER_KEY: key, PEER_SECRET: secret } = process.env;
const path = '/api/v4/trade-account/balance';

export async function signedPost() {
  const body = JSON.stringify({ request: path, nonce: Date.now(), nonceWindow: true });
  const payload = Buffer.from(body).toString('base64');
  const signature = createHmac('sha512', secret).update(payload).digest('hex');
  const response = await request(url + path, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'X-TXC-APIKEY': key, 'X-TXC-PAYLOAD': payload, 'X-TXC-SIGNATURE': signature },
  });
  return response.body.json();
}
