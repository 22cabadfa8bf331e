/**
 * When a plain http:// origin may carry signed requests: only to a host whose traffic never
 * leaves this machine (127.0.0.0/8, ::1, localhost: the sandbox). To any other, the API key,
 * the signed payloads and the account's answers (balances, redeemable codes) cross a network
 * in clear for whoever is on the path to read, and a one-letter slip (http://whitebit.com)
 * sends the first signed request so before the exchange's redirect is refused.
 */

/**
 * 127.0.0.0/8, ::1 and localhost, as a URL's hostname writes them (an IPv6 address in brackets),
 * and 127.0.0.0/8 mapped into IPv6 (::ffff:127.0.0.1, which a URL writes [::ffff:7f00:1]).
 */
const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[?::1\]?|\[?::ffff:(?:127(?:\.\d{1,3}){3}|7f[0-9a-f]{2}:[0-9a-f]{1,4})\]?)$/i;

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOST.test(host);
}

/**
 * The rule signed requests to `origin` would break, or null: plain http:// to a host that is not
 * this machine. Anything else (https://, a region name) is not this rule's business.
 */
export function plainHttpRule(origin: string): string | null {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' || isLoopbackHost(url.hostname)) return null;
  return (
    `is plain http:// to ${url.hostname}, which is not this machine: signed requests and account answers would cross the network in clear; use https:// ` +
    '(plain http is for a sandbox on this machine: 127.0.0.1, [::1] or localhost; on a lab network of your own, STACKER_ALLOW_PLAIN_HTTP=1 allows it)'
  );
}
