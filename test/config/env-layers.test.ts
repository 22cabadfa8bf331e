import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSettings, readEnvLayers, settingsFromLayers } from '../../src/config/settings.ts';
import { ConfigError } from '../../src/domain/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'stacker-layers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readEnvLayers (the one reader of the environment, shared by every config module)', () => {
  it('finds a key in the real environment first, then in the env file, and says where', async () => {
    const file = join(dir, 'a.env');
    writeFileSync(file, 'STACKER_MODE=live\nSTACKER_DATA_DIR=/file\nSTACKER_REGION=eu\n');
    const layers = await readEnvLayers(file, { env: { STACKER_DATA_DIR: '/env', STACKER_REGION: '' } });
    expect(layers.lookup('STACKER_DATA_DIR')).toEqual({ value: '/env', source: 'environment' });
    expect(layers.lookup('STACKER_MODE')).toEqual({ value: 'live', source: `env file ${file}` });
    // An empty value in the environment counts as unset, so the file's value shows through.
    expect(layers.lookup('STACKER_REGION')).toEqual({ value: 'eu', source: `env file ${file}` });
    expect(layers.lookup('STACKER_METRICS_PORT')).toBeNull();
    expect(layers.fileKeys).toEqual(['STACKER_MODE', 'STACKER_DATA_DIR', 'STACKER_REGION']);
  });

  it('never mistakes an inherited property for a key of the file', async () => {
    const layers = await readEnvLayers(null, { env: {} });
    expect(layers.lookup('constructor')).toBeNull();
    expect(layers.lookup('toString')).toBeNull();
  });

  it('refuses an empty --env-file and names a missing one', async () => {
    await expect(readEnvLayers('', { env: {} })).rejects.toBeInstanceOf(ConfigError);
    const missing = join(dir, 'missing.env');
    const error = await readEnvLayers(missing, { env: {} }).catch((e: unknown) => e);
    expect((error as ConfigError).message).toBe(`--env-file: file not found: ${missing}`);
  });

  it('gives loadSettings and settingsFromLayers the same answer', async () => {
    const env = { STACKER_REGION: 'eu', STACKER_LOG_LEVEL: 'warn', STACKER_API_KEY: 'k', STACKER_API_SECRET: 's' };
    const direct = await loadSettings({}, { env });
    const layered = settingsFromLayers({}, await readEnvLayers(undefined, { env }));
    expect(JSON.stringify(layered)).toBe(JSON.stringify(direct));
    expect(layered.credentials?.apiSecret).toBe('s');
  });
});
