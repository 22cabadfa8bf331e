import { ConfigError, InputError, type InputProblem } from '../domain/errors.ts';
import { plainHttpRule } from '../domain/plain-http.ts';
import { REGION_URLS } from '../domain/regions.ts';

export { REGION_URLS, type Region } from '../domain/regions.ts';

/**
 * 'global' | 'eu' | an http(s) URL → origin string. A URL with a path, query, fragment or
 * credentials is refused rather than silently cut down to its origin: the paths are ours.
 */
export function resolveBaseUrl(regionOrUrl: string): string {
  if (regionOrUrl === 'global' || regionOrUrl === 'eu') return REGION_URLS[regionOrUrl];
  let url: URL;
  try {
    url = new URL(regionOrUrl);
  } catch {
    throw InputError.one('base-url', `must be "global", "eu" or an http(s) URL (got ${JSON.stringify(regionOrUrl)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw InputError.one('base-url', `must use http or https (got ${url.protocol.replace(/:$/, '')})`);
  }
  if (url.username !== '' || url.password !== '') {
    throw InputError.one('base-url', 'must not carry credentials');
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    throw InputError.one('base-url', `must be an origin such as https://whitebit.com, without a path, query or fragment (got ${JSON.stringify(regionOrUrl)})`);
  }
  return url.origin;
}

/** What resolveSignedBaseUrl needs beyond the endpoint: the opt-in, and the setting to name. */
export interface SignedEndpointOptions {
  /** STACKER_ALLOW_PLAIN_HTTP: plain http:// to another host is a lab's own choice. */
  readonly allowPlainHttp: boolean;
  /** The flag or key that chose the endpoint (and where it was set), for the message. */
  readonly setting: Pick<InputProblem, 'field' | 'source'>;
}

/**
 * resolveBaseUrl for a client that signs: plain http:// to a host that is not this machine is a
 * ConfigError naming the setting (exit 2) before anything is sent, unless allowed.
 */
export function resolveSignedBaseUrl(endpoint: string, options: SignedEndpointOptions): string {
  const origin = resolveBaseUrl(endpoint);
  const rule = options.allowPlainHttp ? null : plainHttpRule(origin);
  if (rule !== null) throw new ConfigError([{ ...options.setting, rule }]);
  return origin;
}
