import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { envFileExposureNote } from '../../src/config/env-file-exposure.ts';
import { readEnvLayers } from '../../src/config/settings.ts';
import { finished, startCli } from '../cli/run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'stacker-env-exposure-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function noteFor(name: string, text: string, mode: number): Promise<string | null> {
  const file = join(dir, name);
  writeFileSync(file, text);
  chmodSync(file, mode);
  return envFileExposureNote(await readEnvLayers(file, { env: {} }));
}

describe.skipIf(process.platform === 'win32')('an env file whose secrets other users can read', () => {
  it('is named with its secret keys, never their values, and the chmod that mends it', async () => {
    const note = await noteFor('open.env', 'STACKER_API_KEY=k3yZ\nSTACKER_API_SECRET=s3cr3tZ\nSTACKER_CONTROL_TOKEN=t0k3nZt0k3nZt0k3nZ\nSTACKER_ACCOUNT_kids_API_SECRET=s3cr3tK\n', 0o644);
    expect(note).toBe(`${dir}/open.env holds STACKER_API_SECRET, STACKER_CONTROL_TOKEN, STACKER_ACCOUNT_kids_API_SECRET and other users of this machine can read it (mode 0644): make it yours only with chmod 600 ${dir}/open.env`);
    expect(note).not.toMatch(/k3yZ|s3cr3t|t0k3n/);
  });

  it('counts a database URL only when it carries a password', async () => {
    expect(await noteFor('pg.env', 'STACKER_DATABASE_URL=postgres://stacker:pw@db/stacker\n', 0o640)).toMatch(/holds STACKER_DATABASE_URL and other users .* \(mode 0640\)/);
    expect(await noteFor('pg-nopw.env', 'STACKER_DATABASE_URL=postgres://stacker@db/stacker\n', 0o644)).toBeNull();
  });

  it('counts a notification URL whose path or query is its secret: a webhook token, an ntfy topic', async () => {
    expect(await noteFor('hook.env', 'STACKER_NOTIFY_WEBHOOK_URL=https://hooks.example/h/t0k3nZ?k=v\nSTACKER_NOTIFY_NTFY_URL=https://ntfy.sh/t0p1cZ\n', 0o644)).toMatch(
      /holds STACKER_NOTIFY_WEBHOOK_URL, STACKER_NOTIFY_NTFY_URL and other users/,
    );
    expect(await noteFor('hook-bare.env', 'STACKER_NOTIFY_WEBHOOK_URL=https://hooks.example\n', 0o644)).toBeNull();
    expect(await noteFor('hook-user.env', 'STACKER_NOTIFY_WEBHOOK_URL=https://t0k3nZ@hooks.example/\n', 0o644)).toMatch(/holds STACKER_NOTIFY_WEBHOOK_URL and other users/);
  });

  it("judges what the file holds, though the environment overrides it: the file's secret is still readable", async () => {
    const file = join(dir, 'overridden.env');
    writeFileSync(file, 'STACKER_NOTIFY_WEBHOOK_URL=https://hooks.example/h/t0k3nZ\nSTACKER_API_SECRET=s3cr3tZ\n');
    chmodSync(file, 0o644);
    const layers = await readEnvLayers(file, { env: { STACKER_NOTIFY_WEBHOOK_URL: 'https://hooks.example/', STACKER_API_SECRET: 'other' } });
    expect(envFileExposureNote(layers)).toMatch(/holds STACKER_NOTIFY_WEBHOOK_URL, STACKER_API_SECRET and other users/);
  });

  it('tells of a file other users can change, whatever it holds: whoever writes it decides where stacker trades', async () => {
    expect(await noteFor('writable.env', 'STACKER_REGION=eu\n', 0o602)).toMatch(/writable\.env can be changed by other users of this machine \(mode 0602\): whoever writes it decides where stacker trades; make it yours only with chmod 600/);
  });

  it('says nothing of a private file, or of an open one without secrets', async () => {
    expect(await noteFor('private.env', 'STACKER_API_SECRET=s3cr3tZ\n', 0o600)).toBeNull();
    expect(await noteFor('plain.env', 'STACKER_REGION=eu\nSTACKER_LOG_LEVEL=info\n', 0o644)).toBeNull();
  });

  it('is a warning of every command given the file: the command itself runs on', async () => {
    const file = join(dir, 'cli.env');
    writeFileSync(file, 'STACKER_API_KEY=k3yZ\nSTACKER_API_SECRET=s3cr3tZ\n');
    chmodSync(file, 0o644);
    const result = await finished(startCli(['journal', '--env-file', file, '--data-dir', join(dir, 'no-data')]));
    expect(result.stderr).toContain(`warning: ${file} holds STACKER_API_SECRET and other users of this machine can read it (mode 0644): make it yours only with chmod 600 ${file}`);
    expect(result.stderr + result.stdout).not.toMatch(/k3yZ|s3cr3tZ/);
  });
});
