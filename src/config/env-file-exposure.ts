import { statSync } from 'node:fs';
import type { EnvLayers } from './settings.ts';

/** Settings whose value is a secret: the API secrets, the control token, notification secrets and tokens. */
const SECRET_KEY = /^STACKER_\w*(?:SECRET|TOKEN|PASSWORD)$/i;
const DATABASE_URL = 'STACKER_DATABASE_URL';

/**
 * The env file's secrets readable by other users of the machine: `cp .env.example .env` under
 * the usual umask makes it 0644. As ssh does with a private key, stacker says so (naming the
 * keys, never their values) and how to mend it; it does not refuse, because a file mounted into
 * a container may have to stay readable by the container's user. null when the file is private,
 * holds no secret, or permissions mean nothing here (Windows).
 */
export function envFileExposureNote(layers: Pick<EnvLayers, 'envFile' | 'fileKeys' | 'lookup'>): string | null {
  const file = layers.envFile;
  if (file === null || process.platform === 'win32') return null;
  let mode: number;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    return null;
  }
  if ((mode & 0o044) === 0) return null;
  const secrets = layers.fileKeys.filter((key) => layers.lookup(key) !== null && (SECRET_KEY.test(key) || (key === DATABASE_URL && hasPassword(layers.lookup(key)?.value))));
  if (secrets.length === 0) return null;
  return `${file} holds ${secrets.join(', ')} and other users of this machine can read it (mode ${mode.toString(8).padStart(4, '0')}): make it yours only with chmod 600 ${file}`;
}

function hasPassword(url: string | undefined): boolean {
  if (url === undefined) return false;
  try {
    const parsed = new URL(url);
    return parsed.password !== '' || parsed.searchParams.has('password');
  } catch {
    return false;
  }
}
