import { describe, expect, it } from 'vitest';
import { StoreError } from '../../src/store/errors.ts';
import { PG_FAILURE_KINDS } from '../../src/store/pg-db.ts';
import { WriteFailureWatch } from '../../src/store/write-failure.ts';

const diskFull = new StoreError('unwritable', 'claiming slot dca@1: the journal\'s database cannot be written: could not extend file', { cause: Object.assign(new Error('could not extend file'), { code: '53100' }) });
const unreachable = new StoreError('unwritable', 'claiming slot dca@1: the journal\'s database cannot be written: connect ECONNREFUSED', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });

describe('the journal write failure /healthz reports', () => {
  it('counts from the first failure, and an outage is cleared by any write that gets through, a heartbeat too', () => {
    let nowMs = 1_000;
    const watch = new WriteFailureWatch(PG_FAILURE_KINDS, () => nowMs);
    watch.failed(unreachable);
    nowMs = 5_000;
    watch.failed(unreachable);
    expect(watch.current).toEqual({ atMs: 1_000, message: unreachable.message });
    watch.succeeded(true);
    expect(watch.current).toBeNull();
  });

  it("stays through a heartbeat when the disk is full (the heartbeat's update of a row fits where a new slot does not), until the daemon's own work is written", () => {
    const watch = new WriteFailureWatch(PG_FAILURE_KINDS, () => 7);
    watch.failed(diskFull);
    watch.succeeded(true);
    watch.succeeded(true);
    expect(watch.current).toEqual({ atMs: 7, message: diskFull.message });
    watch.succeeded(false);
    expect(watch.current).toBeNull();
  });

  it('leaves failures of another kind out (a conflict is not an unwritable journal)', () => {
    const watch = new WriteFailureWatch(PG_FAILURE_KINDS, () => 7);
    watch.failed(new StoreError('conflict', 'claiming slot dca@1: duplicate key'));
    expect(watch.current).toBeNull();
  });
});
