import { statSync } from 'node:fs';
import { hasPassword } from '../store/pg-url.ts';
import type { EnvLayers } from './settings.ts';

/** Settings whose value is a secret: the API secrets, the control token, notification secrets and tokens. */
const SECRET_KEY = /^STACKER_\w*(?:SECRET|TOKEN|PASSWORD)$/i;
const DATABASE_URL = 'STACKER_DATABASE_URL';
/** Notification URLs whose path or query is the secret: a webhook's token, an ntfy topic (whoever knows it reads the messages). */
const NOTIFY_URLS: ReadonlySet<string> = new Set(['STACKER_NOTIFY_WEBHOOK_URL', 'STACKER_NOTIFY_NTFY_URL']);

/**
 * The env file's secrets readable by other users of the machine: `cp .env.example .env` under
 * the usual umask makes it 0644. As ssh does with a private key, stacker says so (naming the
 * keys, never their values) and how to mend it; it does not refuse, because a file mounted into
 * a container may have to stay readable by the container's user. A file others can write is told
 * whatever it holds. null when the file is private, holds no secret, or permissions mean nothing
 * here (Windows).
 */
export function envFileExposureNote(layers: Pick<EnvLayers, 'envFile' | 'fileKeys' | 'fileValue'>): string | null {
  const file = layers.envFile;
  if (file === null || process.platform === 'win32') return null;
  let mode: number;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    return null;
  }
  const shown = mode.toString(8).padStart(4, '0');
  // Whoever can write it decides where stacker sends signed orders (STACKER_BASE_URL) and which strategies run.
  if ((mode & 0o022) !== 0) return `${file} can be changed by other users of this machine (mode ${shown}): whoever writes it decides where stacker trades; make it yours only with chmod 600 ${file}`;
  if ((mode & 0o044) === 0) return null;
  // The file's own values: one the environment overrides is still written in the file.
  const secrets = layers.fileKeys.filter((key) => isSecret(key, layers.fileValue(key) ?? undefined));
  if (secrets.length === 0) return null;
  return `${file} holds ${secrets.join(', ')} and other users of this machine can read it (mode ${shown}): make it yours only with chmod 600 ${file}`;
}

function isSecret(key: string, value: string | undefined): boolean {
  if (value === undefined) return false;
  if (SECRET_KEY.test(key)) return true;
  if (key === DATABASE_URL) return hasPassword(value);
  return NOTIFY_URLS.has(key) && carriesSecret(value);
}

/** A URL with credentials, a path or a query: where a webhook's token or an ntfy topic sits. */
function carriesSecret(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== '' || parsed.password !== '' || (parsed.pathname !== '/' && parsed.pathname !== '') || parsed.search !== '';
  } catch {
    return false;
  }
}

