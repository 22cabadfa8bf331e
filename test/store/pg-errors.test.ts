import { describe, expect, it } from 'vitest';
import { asStoreError } from '../../src/store/pg-db.ts';

/**
 * How a PostgreSQL or connection failure is classed decides whether the daemon waits it out
 * (a standby, a slot tried again) or stops: node-postgres reports a lost connection in words, not
 * always with a code.
 */
describe("a PostgreSQL client's failure, as a journal error", () => {
  it.each([
    'Connection terminated unexpectedly',
    // A query on a session whose connection broke between its connect and its query (a restart).
    'Client has encountered a connection error and is not queryable',
    'Client was closed and is not queryable',
  ])('"%s" is the database out of reach: retryable', (message) => {
    expect(asStoreError(new Error(message), 'taking the lock')).toMatchObject({ reason: 'unwritable', retryable: true });
  });

  it('names the setting to check: STACKER_DATABASE_URL for a refused login, a missing database, and a host name that does not resolve', () => {
    const login = asStoreError(Object.assign(new Error('password authentication failed for user "stacker"'), { code: '28P01' }), 'opening');
    expect(login).toMatchObject({ reason: 'open-failed', retryable: false, message: 'opening: password authentication failed for user "stacker" (check the user, password and database in STACKER_DATABASE_URL)' });
    const host = asStoreError(Object.assign(new Error('getaddrinfo ENOTFOUND nohost.invalid'), { code: 'ENOTFOUND' }), 'opening');
    expect(host).toMatchObject({ reason: 'unwritable', retryable: true, message: expect.stringMatching(/ENOTFOUND nohost\.invalid; if this lasts, check the host name in STACKER_DATABASE_URL$/) });
    expect(asStoreError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), 'opening').message).not.toContain('host name');
  });

  it('a refused statement is not retried', () => {
    const error = Object.assign(new Error('syntax error at or near "SELEC"'), { code: '42601' });
    expect(asStoreError(error, 'reading')).toMatchObject({ reason: 'postgres', retryable: false });
  });
});
