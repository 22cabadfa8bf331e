import { isIP } from 'node:net';

/**
 * An address as the back-off and the trusted list compare it: an IPv4 mapped into IPv6 as the
 * IPv4, IPv6 in lower case without brackets, a port some proxies add dropped; null when it is
 * no address.
 */
export function plainAddress(text: string): string | null {
  let address = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed !== null) address = bracketed[1] as string;
  else if (/^\d{1,3}(?:\.\d{1,3}){3}:\d+$/.test(address)) address = address.slice(0, address.lastIndexOf(':'));
  address = address.toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address);
  if (mapped !== null) address = mapped[1] as string;
  return isIP(address) === 0 ? null : address;
}
