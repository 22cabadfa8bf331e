import { InputError } from '../domain/errors.ts';
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
