import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgJournal } from '../../src/store/pg-journal.ts';
import { inspectPgJournal } from '../../src/store/pg-store.ts';
import { driverUrl } from '../../src/store/pg-url.ts';
import { clusterUrl } from '../support/pg-cluster.ts';
import { ownClusterPerFile } from '../support/pg-own-cluster.ts';
import { failure } from '../support/thrown.ts';

/**
 * The TLS modes of STACKER_DATABASE_URL against a server with a certificate of a CA of its own,
 * issued to a name that is not the address stacker dials (as a database behind a load balancer,
 * or reached by IP): `verify-ca` checks the CA and not the name, `verify-full` and `require`
 * check both, and none of them makes node-postgres print advice about a parameter stacker refuses.
 * A cluster of this file's own, with TLS on; skipped without PostgreSQL or openssl.
 */
const openssl = spawnSync('openssl', ['version']).status === 0;
let certs: string;

function makeCa(name: string): void {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(certs, `${name}.key`), '-out', join(certs, `${name}.crt`), '-days', '2', '-subj', `/CN=${name}`], { stdio: 'ignore' });
}

// Before the cluster's own beforeAll, which reads the certificate made here.
beforeAll(() => {
  if (!openssl) return;
  certs = mkdtempSync(join(tmpdir(), 'stacker-tls-'));
  makeCa('stacker-test-ca');
  makeCa('another-ca');
  execFileSync('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(certs, 'server.key'), '-out', join(certs, 'server.csr'), '-subj', '/CN=stacker-db.test'], { stdio: 'ignore' });
  execFileSync('openssl', ['x509', '-req', '-in', join(certs, 'server.csr'), '-CA', join(certs, 'stacker-test-ca.crt'), '-CAkey', join(certs, 'stacker-test-ca.key'), '-CAcreateserial', '-out', join(certs, 'server.crt'), '-days', '2'], { stdio: 'ignore' });
});
afterAll(() => {
  if (certs !== undefined) rmSync(certs, { recursive: true, force: true });
});
const own = ownClusterPerFile(() =>
  openssl
    ? {
        files: { 'server.crt': readFileSync(join(certs, 'server.crt'), 'utf8'), 'server.key': readFileSync(join(certs, 'server.key'), 'utf8') },
        settings: ['ssl=on', 'ssl_cert_file={root}/server.crt', 'ssl_key_file={root}/server.key'],
      }
    : {},
);

const url = (query: string): string => `${clusterUrl(own.cluster(), 'postgres')}?${query}`;
const ca = (name = 'stacker-test-ca'): string => join(certs, `${name}.crt`);

describe.skipIf(!own.available || !openssl)('TLS to the journal database', () => {
  it('verify-ca trusts a certificate of the CA in sslrootcert whatever name it carries; verify-full and require also check the name, and say which', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      expect(await inspectPgJournal(url(`sslmode=verify-ca&sslrootcert=${ca()}`), 'stacker_live')).toEqual({ state: 'missing' });
      const journal = new PgJournal({ url: url(`sslmode=verify-ca&sslrootcert=${ca()}`), schema: 'stacker_live' });
      await journal.open();
      expect(await journal.journalId()).toMatch(/^[0-9a-f]{32}$/);
      await journal.close();

      for (const mode of ['verify-full', 'require']) {
        expect(await failure(inspectPgJournal(url(`sslmode=${mode}&sslrootcert=${ca()}`), 'stacker_live'))).toMatchObject({
          code: 'E_STORE',
          message: expect.stringContaining("Hostname/IP does not match certificate's altnames"),
        });
      }
      expect(await failure(inspectPgJournal(url(`sslmode=verify-ca&sslrootcert=${ca('another-ca')}`), 'stacker_live'))).toMatchObject({ message: expect.stringMatching(/certificate/) });
      // node-postgres' own warning on `require` advises uselibpqcompat=true, a parameter stacker refuses: never printed.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((text) => /SECURITY WARNING|uselibpqcompat/.test(text))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('no-verify encrypts without checking, and disable does not encrypt: the server says which', async () => {
    const journal = new PgJournal({ url: url('sslmode=no-verify'), schema: 'stacker_dry_run' });
    await journal.open();
    await journal.close();
    const plain = new PgJournal({ url: url('sslmode=disable'), schema: 'stacker_dry_run' });
    await plain.open();
    await plain.close();
    // The URL as the journal's sessions are given it, asked of the server: a TLS session shows in pg_stat_ssl.
    const tls = async (query: string): Promise<boolean> => {
      const client = new pg.Client({ connectionString: driverUrl(url(query)) });
      await client.connect();
      try {
        return (await client.query('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()')).rows[0]?.ssl === true;
      } finally {
        await client.end();
      }
    };
    expect(await tls('sslmode=no-verify')).toBe(true);
    expect(await tls('sslmode=disable')).toBe(false);
    expect(await tls(`sslmode=verify-ca&sslrootcert=${ca()}`)).toBe(true);
  });
});
