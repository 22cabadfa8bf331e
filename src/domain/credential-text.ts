/**
 * What an API key or secret may be made of. Exchanges issue them as printable ASCII; anything
 * else came with the paste: a space or newline, the quotes of a .env line, an invisible
 * character from a web page or a chat (U+200B). Such a key is refused by HTTP itself (undici
 * will not put it in a header) or signs every request wrong, and neither says why, so it is
 * refused where it is read, with the rule and never the value.
 */
const WHITESPACE = /\s/;
const QUOTE_AT_AN_END = /^["'`]|["'`]$/;
const PRINTABLE_ASCII = /^[\x21-\x7e]*$/;

/** Printable ASCII without spaces: what a key, a secret or the control token may be made of. */
export function isPrintableAscii(value: string): boolean {
  return PRINTABLE_ASCII.test(value);
}

/** What is wrong with a key or secret, or null when nothing is. The value is never quoted. */
export function credentialTextProblem(value: string): string | null {
  if (value === '') return 'must not be empty';
  if (WHITESPACE.test(value)) return 'contains whitespace (a stray space, newline or quote when it was pasted?)';
  if (QUOTE_AT_AN_END.test(value)) return 'starts or ends with a quote (copied with the quotes around it?); write it without them';
  if (!isPrintableAscii(value)) {
    const odd = [...value].find((char) => !isPrintableAscii(char)) as string;
    const codePoint = `U+${(odd.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;
    return `contains ${codePoint}, which is not printable ASCII (an invisible character pasted with it?); keys and secrets are printable ASCII only`;
  }
  return null;
}
