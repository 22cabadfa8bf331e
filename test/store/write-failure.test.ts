import { describe, expect, it } from 'vitest';
import { StoreError } from '../../src/store/errors.ts';
import { PG_FAILURE_KINDS } from '../../src/store/pg-db.ts';
import { WriteFailureWatch } from '../../src/store/write-failure.ts';

const diskFull = new StoreError('unwritable', "claiming slot dca@1: the journal's database cannot be written: could not extend file", { cause: Object.assign(new Error('could not extend file'), { code: '53100' }) });
const unreachable = new StoreError('unwritable', "claiming slot dca@1: the journal's database cannot be written: connect ECONNREFUSED", { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
const noPrivilege = new StoreError('no-privilege', 'recording order 4180284841: permission denied for table orders');

describe('the journal write failure /healthz reports', () => {
  it('counts from the first failure, and an outage is cleared by any operation that gets through, a heartbeat too', () => {
    let nowMs = 1_000;
    const watch = new WriteFailureWatch(PG_FAILURE_KINDS, () => nowMs);
    watch.failed(unreachable, 'claiming slot dca@1795846390000');
    nowMs = 5_000;
    watch.failed(unreachable, 'claiming slot dca@1795846400000');
    expect(watch.current).toEqual({ atMs: 1_000, message: unreachable.message });
    watch.succeeded('writing the heartbeat');
    expect(watch.current).toBeNull();
  });

  it("lasts through other operations' success when the disk is full (the heartbeat's update of a row fits where a new slot does not), until the one that failed succeeds", () => {
    const watch = new WriteFailureWatch(PG_FAILURE_KINDS, () => 7);
    watch.failed(diskFull, 'claiming slot dca@1795846390000');
    watch.succeeded('writing the heartbeat');
    expect(watch.current).toEqual({ atMs: 7, message: diskFull.message, lasting: true });
    // The same operation for another slot: the disk has room again.
    watch.succeeded('claiming slot dca@1795846400000');
    expect(watch.current).toBeNull();
  });

  it("lasts through a slot's claim when the role lost a privilege on the orders table: only recording an order again clears it", () => {
    const watch = new WriteFailureWatch(PG_FAILURE_KINDS, () => 7);
    watch.failed(noPrivilege, 'recording order 4180284841');
    watch.succeeded('claiming slot dca@1795846400000');
    expect(watch.current).toMatchObject({ lasting: true });
    watch.succeeded('recording order 4180284842');
    expect(watch.current).toBeNull();
  });

  it('leaves failures of another kind out (a conflict is not an unwritable journal)', () => {
    const watch = new WriteFailureWatch(PG_FAILURE_KINDS, () => 7);
    watch.failed(new StoreError('conflict', 'claiming slot dca@1: duplicate key'), 'claiming slot dca@1');
    expect(watch.current).toBeNull();
  });
});
