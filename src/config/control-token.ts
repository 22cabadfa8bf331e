import { createHash, timingSafeEqual } from 'node:crypto';
import { inspect } from 'node:util';

/**
 * STACKER_CONTROL_TOKEN: the bearer token the status API's controls (pause, resume, run, kill
 * switch) require. Only its SHA-256 digest is kept, so no config dump, log line or heap
 * inspection can show the token; a presented token is hashed the same way and compared in
 * constant time over equal-length digests, so neither its content nor its length leaks
 * through timing.
 */
export interface ControlToken {
  matches(presented: string): boolean;
}

export const CONTROL_TOKEN_MIN_LENGTH = 16;
/**
 * A token of few different characters (0000000000000000, abababababababab) is a placeholder or a
 * pattern, guessed first. Six: a random 16-character hex token has fewer about once in 30,000
 * draws, the README's `openssl rand -hex 32` practically never.
 */
export const CONTROL_TOKEN_MIN_DISTINCT = 6;

export function makeControlToken(token: string): ControlToken {
  const expected = digest(token);
  const shown = '[redacted]';
  const controlToken: ControlToken = { matches: (presented) => timingSafeEqual(digest(presented), expected) };
  Object.defineProperty(controlToken, 'toJSON', { value: () => shown, enumerable: false });
  Object.defineProperty(controlToken, inspect.custom, { value: () => shown, enumerable: false });
  return controlToken;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
