import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSettings, makeCredentials, requireCredentials } from '../../src/config/settings.ts';
import { ConfigError } from '../../src/domain/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'stacker-settings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function envFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function problemsOf(promise: Promise<unknown>): Promise<string[]> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).problems.map((p) => `${p.source ? `${p.source}: ` : ''}${p.field}: ${p.rule}`);
}

describe('settings', () => {
  it('defaults to the global region and no credentials when nothing is set', async () => {
    const settings = await loadSettings({}, { env: {} });
    expect(settings).toMatchObject({ endpoint: 'global', endpointSource: 'default', credentials: null, logLevel: 'info', envFile: null });
    expect(Object.isFrozen(settings)).toBe(true);
  });

  it('takes the base URL from the flag over the environment, and reduces it to its origin', async () => {
    const settings = await loadSettings({ baseUrl: 'http://127.0.0.1:8080/' }, { env: { STACKER_BASE_URL: 'https://whitebit.eu' } });
    expect(settings.endpoint).toBe('http://127.0.0.1:8080');
    expect(settings.endpointSource).toBe('--base-url');
  });

  it('lets --region override STACKER_BASE_URL from the environment', async () => {
    const settings = await loadSettings({ region: 'eu' }, { env: { STACKER_BASE_URL: 'http://127.0.0.1:1' } });
    expect(settings.endpoint).toBe('eu');
  });

  it('prefers STACKER_BASE_URL to STACKER_REGION when both are set', async () => {
    const settings = await loadSettings({}, { env: { STACKER_BASE_URL: 'http://localhost:9', STACKER_REGION: 'eu' } });
    expect(settings.endpoint).toBe('http://localhost:9');
    expect(settings.endpointSource).toBe('STACKER_BASE_URL (environment)');
  });

  it('takes STACKER_REGION from the environment over a STACKER_BASE_URL in the env file: the higher layer wins, as for every setting', async () => {
    const file = envFile('prod.env', 'STACKER_BASE_URL=http://127.0.0.1:9\n');
    const settings = await loadSettings({ envFile: file }, { env: { STACKER_REGION: 'eu' } });
    expect([settings.endpoint, settings.endpointSource]).toEqual(['eu', 'STACKER_REGION (environment)']);
    // Both in the file: the base URL, as when both are in the environment.
    const both = envFile('both.env', 'STACKER_BASE_URL=http://127.0.0.1:9\nSTACKER_REGION=eu\n');
    expect((await loadSettings({ envFile: both }, { env: {} })).endpoint).toBe('http://127.0.0.1:9');
    // A base URL in the environment over a region in the file.
    const region = envFile('region.env', 'STACKER_REGION=eu\n');
    expect((await loadSettings({ envFile: region }, { env: { STACKER_BASE_URL: 'http://127.0.0.1:9' } })).endpoint).toBe('http://127.0.0.1:9');
  });

  it('refuses --base-url together with --region', async () => {
    expect(await problemsOf(loadSettings({ baseUrl: 'http://a.test', region: 'eu' }, { env: {} }))).toEqual([
      '--base-url: give either --base-url or --region, not both',
    ]);
  });

  it('reports every bad setting at once, each with where it came from', async () => {
    const file = envFile('bad.env', 'STACKER_LOG_LEVEL=loud\n');
    const problems = await problemsOf(loadSettings({ envFile: file }, { env: { STACKER_BASE_URL: 'ftp://x.test' } }));
    expect(problems).toEqual([
      'environment: STACKER_BASE_URL: must use http or https (got ftp)',
      `env file ${file}: STACKER_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent (got "loud")`,
    ]);
  });

  it('reads STACKER_LOG_FORMAT as json or pretty (any case), left to the terminal when unset, and refuses anything else naming it', async () => {
    expect((await loadSettings({}, { env: {} })).logFormat).toBeNull();
    expect((await loadSettings({}, { env: { STACKER_LOG_FORMAT: 'json' } })).logFormat).toBe('json');
    expect((await loadSettings({}, { env: { STACKER_LOG_FORMAT: ' Pretty ' } })).logFormat).toBe('pretty');
    const file = envFile('format.env', 'STACKER_LOG_FORMAT=yaml\n');
    expect(await problemsOf(loadSettings({ envFile: file }, { env: {} }))).toEqual([
      `env file ${file}: STACKER_LOG_FORMAT: must be json (one JSON object a line, on a terminal too) or pretty (readable lines); unset, it is pretty on a terminal and json otherwise (got "yaml")`,
    ]);
  });

  it('refuses a base URL with a path, query or credentials', async () => {
    expect(await problemsOf(loadSettings({ baseUrl: 'https://whitebit.com/api/v4' }, { env: {} }))).toEqual([
      '--base-url: must be an origin such as https://whitebit.com, without a path, query or fragment (got "https://whitebit.com/api/v4")',
    ]);
    expect(await problemsOf(loadSettings({ baseUrl: 'https://u:p@whitebit.com' }, { env: {} }))).toEqual(['--base-url: must not carry credentials']);
    expect(await problemsOf(loadSettings({ region: 'us' }, { env: {} }))).toEqual(['--region: must be one of global, eu (got "us")']);
  });

  it('reads an env file, and the real environment wins over it (dotenv convention)', async () => {
    const file = envFile('keys.env', 'STACKER_API_KEY=file-key\nSTACKER_API_SECRET="file secret"\nSTACKER_REGION=eu\n');
    const fromFile = await loadSettings({ envFile: file }, { env: {} });
    expect(fromFile.endpoint).toBe('eu');
    expect(fromFile.credentials).toBeNull();
    expect(fromFile.credentialProblems.map((p) => `${p.field}: ${p.rule}`)).toEqual([
      'STACKER_API_SECRET: contains whitespace (a stray space, newline or quote when it was pasted?)',
    ]);
    const real = await loadSettings({ envFile: file }, { env: { STACKER_API_SECRET: 'real-secret', STACKER_REGION: 'global' } });
    expect(real.endpoint).toBe('global');
    expect(real.credentials?.apiKey).toBe('file-key');
    expect(real.credentials?.apiSecret).toBe('real-secret');
  });

  it('refuses a pasted key with an invisible character or its quotes, naming the variable and never the value', async () => {
    const settings = await loadSettings({}, { env: { STACKER_API_KEY: 'K3y9Zq\u200b', STACKER_API_SECRET: "'S3cr9Zq'" } });
    expect(settings.credentials).toBeNull();
    expect(settings.credentialProblems.map((p) => `${p.field}: ${p.rule}`)).toEqual([
      'STACKER_API_KEY: contains U+200B, which is not printable ASCII (an invisible character pasted with it?); keys and secrets are printable ASCII only',
      'STACKER_API_SECRET: starts or ends with a quote (copied with the quotes around it?); write it without them',
    ]);
    expect(JSON.stringify(settings.credentialProblems)).not.toMatch(/K3y9Zq|S3cr9Zq/);
  });

  it('treats an empty environment variable as unset, so the env file still applies', async () => {
    const file = envFile('empty.env', 'STACKER_API_KEY=k\nSTACKER_API_SECRET=s\n');
    const settings = await loadSettings({ envFile: file }, { env: { STACKER_API_KEY: '' } });
    expect(settings.credentials?.apiKey).toBe('k');
  });

  it('names a missing env file', async () => {
    const missing = join(dir, 'nope.env');
    expect(await problemsOf(loadSettings({ envFile: missing }, { env: {} }))).toEqual([`--env-file: file not found: ${missing}`]);
  });

  it('requires both key and secret for a private command, naming STACKER_API_KEY and how to set it', async () => {
    const settings = await loadSettings({}, { env: {} });
    let error: unknown;
    try {
      requireCredentials(settings, 'balance');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(/^STACKER_API_KEY: is not set; `stacker balance` is a private command.*--env-file FILE/m);
    expect((error as ConfigError).message).toMatch(/^STACKER_API_SECRET: is not set/m);
  });

  it('reports a key without its secret, without echoing either value', async () => {
    const settings = await loadSettings({}, { env: { STACKER_API_KEY: 'the-key-value' } });
    expect(() => requireCredentials(settings, 'codes')).toThrow(/STACKER_API_SECRET: is not set, but STACKER_API_KEY is \(from environment\); set both/);
    expect(() => requireCredentials(settings, 'codes')).not.toThrow(/the-key-value/);
  });

  it('keeps the secret out of JSON and inspect output while it stays readable', async () => {
    const credentials = makeCredentials('key-1', 'very-secret-value');
    expect(credentials.apiSecret).toBe('very-secret-value');
    expect(JSON.stringify({ credentials })).not.toContain('very-secret-value');
    expect(inspect({ credentials }, { depth: 5 })).not.toContain('very-secret-value');
    expect(JSON.stringify({ credentials })).toContain('key-1');
  });
});
