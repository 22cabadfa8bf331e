import { createRequire } from 'node:module';
import { Dispatcher, Pool as IndexPool } from 'undici';
import { describe, expect, it } from 'vitest';
import { Pool, request } from '../../src/api/undici-core.ts';
import { startSandbox } from '../../src/sandbox/server.ts';

// src/api/undici-core.ts reaches into undici's files to keep its index (and everything it
// loads) out of the daemon. These pin what that relies on, so an undici upgrade that moves a
// file or changes an export fails here rather than in a running daemon.
describe('the lean undici entry', () => {
  it('is the very Pool class undici exports', () => {
    expect(Pool).toBe(IndexPool);
  });

  it('loads the very request function undici attaches to every dispatcher', () => {
    const fromFile: unknown = createRequire(import.meta.url)('undici/lib/api/api-request.js');
    expect(fromFile).toBe((Dispatcher.prototype as unknown as { request: unknown }).request);
  });

  it('sends a request through a pool and reads the answer', async () => {
    const sandbox = await startSandbox();
    const pool = new Pool(sandbox.url, { connections: 1 });
    try {
      const response = await request(pool, { origin: sandbox.url, path: '/api/v4/public/ping', method: 'GET' });
      expect(response.statusCode).toBe(200);
      expect(JSON.parse(await response.body.text())).toEqual(['pong']);
    } finally {
      await pool.close();
      await sandbox.stop();
    }
  });
});
