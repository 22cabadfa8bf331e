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

  it('a refused statement is not retried', () => {
    const error = Object.assign(new Error('syntax error at or near "SELEC"'), { code: '42601' });
    expect(asStoreError(error, 'reading')).toMatchObject({ reason: 'postgres', retryable: false });
  });
});
