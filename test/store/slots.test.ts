import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JOURNAL_KINDS, SLOT, TempWorld, buy } from './helpers.ts';

let world: TempWorld;
beforeEach(() => {
  world = new TempWorld();
});
afterEach(async () => {
  await world.cleanup();
});

describe.each(JOURNAL_KINDS)('slots: a journalled slot never runs twice (%s journal)', (kind) => {
  beforeEach(() => {
    world.kind = kind;
  });

  it('claims a slot once; the second claim is false, other instances and times are free', async () => {
    const journal = await world.openJournal();
    expect(await journal.claimSlot({ ...SLOT, runId: null })).toBe(true);
    expect(await journal.claimSlot({ ...SLOT, runId: null })).toBe(false);
    expect(await journal.claimSlot({ instance: 'dca-eth', slotTimeMs: SLOT.slotTimeMs, runId: null })).toBe(true);
    expect(await journal.claimSlot({ instance: SLOT.instance, slotTimeMs: SLOT.slotTimeMs + 60_000, runId: null })).toBe(true);
  });

  it('refuses the claim again after close and reopen, whatever became of the slot', async () => {
    const first = await world.openJournal();
    expect(await first.claimSlot({ ...SLOT, runId: null })).toBe(true);
    await first.close();
    const second = await world.openJournal();
    expect(await second.claimSlot({ ...SLOT, runId: null })).toBe(false);
    await second.finishSlot({ ...SLOT, status: 'failed', reason: 'boom' });
    await second.close();
    const third = await world.openJournal();
    expect(await third.claimSlot({ ...SLOT, runId: null })).toBe(false);
  });

  it('lets exactly one of two connections on one file claim a slot', async () => {
    const a = await world.openJournal();
    const b = await world.openJournal();
    const results = await Promise.all([a.claimSlot({ ...SLOT, runId: null }), b.claimSlot({ ...SLOT, runId: null })]);
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('journals a missed slot (catch-up policy) so that no later run claims it', async () => {
    const journal = await world.openJournal();
    expect(await journal.skipSlot({ ...SLOT, runId: null, status: 'missed', reason: 'daemon was stopped; CATCH_UP=skip' })).toBe(true);
    expect(await journal.skipSlot({ ...SLOT, runId: null, status: 'missed', reason: 'again' })).toBe(false);
    expect(await journal.claimSlot({ ...SLOT, runId: null })).toBe(false);
    expect(await journal.getSlot(SLOT)).toMatchObject({ status: 'missed', reason: 'daemon was stopped; CATCH_UP=skip', finishedAtMs: world.nowMs });
  });

  it('does not journal a skip over a slot already claimed', async () => {
    const journal = await world.openJournal();
    await journal.claimSlot({ ...SLOT, runId: null });
    expect(await journal.skipSlot({ ...SLOT, runId: null, status: 'skipped', reason: 'late' })).toBe(false);
    expect(await journal.getSlot(SLOT)).toMatchObject({ status: 'claimed' });
  });

  it('finishes a claimed slot once; finishing again or finishing an unknown slot is refused', async () => {
    const journal = await world.openJournal();
    await journal.claimSlot({ ...SLOT, runId: null });
    world.nowMs += 5_000;
    expect(await journal.finishSlot({ ...SLOT, status: 'done' })).toMatchObject({ status: 'done', reason: null, finishedAtMs: world.nowMs });
    await expect(journal.finishSlot({ ...SLOT, status: 'failed' })).rejects.toMatchObject({ code: 'E_STORE', reason: 'illegal-transition' });
    await expect(journal.finishSlot({ instance: 'nobody', slotTimeMs: 1, status: 'done' })).rejects.toMatchObject({ reason: 'not-found' });
  });

  it('claims a slot and journals its intents in one transaction: a bad intent leaves no claim', async () => {
    const journal = await world.openJournal();
    const twice = [
      { index: 0, intent: { kind: 'set-state', key: 'last-buy', value: 'today' } as const },
      { index: 1, intent: buy('0.1') },
      { index: 1, intent: buy('0.2') },
    ];
    await expect(journal.claimSlot({ ...SLOT, runId: null, intents: twice })).rejects.toMatchObject({ reason: 'conflict' });
    expect(await journal.getSlot(SLOT)).toBeNull();
    expect(await journal.listIntents()).toEqual([]);
    expect([...(await journal.getState(SLOT.instance))]).toEqual([]);
    expect(await journal.claimSlot({ ...SLOT, runId: null, intents: [{ index: 0, intent: buy('0.1') }] })).toBe(true);
  });

  it('adds intents only to a claimed slot', async () => {
    const journal = await world.openJournal();
    await expect(journal.addIntents(SLOT, [{ index: 0, intent: buy('1') }])).rejects.toMatchObject({ reason: 'not-found' });
    await journal.claimSlot({ ...SLOT, runId: null });
    expect(await journal.addIntents(SLOT, [{ index: 0, intent: buy('1') }])).toHaveLength(1);
    await journal.finishSlot({ ...SLOT, status: 'done' });
    await expect(journal.addIntents(SLOT, [{ index: 1, intent: buy('1') }])).rejects.toMatchObject({ reason: 'illegal-transition' });
  });

  it('lists the slots a crash left claimed, and the last slot of an instance', async () => {
    const journal = await world.openJournal();
    await journal.claimSlot({ ...SLOT, runId: null });
    await journal.finishSlot({ ...SLOT, status: 'done' });
    const next = { ...SLOT, slotTimeMs: SLOT.slotTimeMs + 86_400_000 };
    await journal.claimSlot({ ...next, runId: null });
    await journal.claimSlot({ instance: 'other', slotTimeMs: 5, runId: null });
    expect((await journal.listSlots({ status: 'claimed' })).map((s) => `${s.instance}@${s.slotTimeMs}`)).toEqual([
      `${SLOT.instance}@${next.slotTimeMs}`,
      'other@5',
    ]);
    expect(await journal.lastSlot(SLOT.instance)).toMatchObject({ slotTimeMs: next.slotTimeMs, status: 'claimed' });
    expect(await journal.lastSlot('never')).toBeNull();
    expect(await journal.listSlots({ instance: SLOT.instance, sinceMs: SLOT.slotTimeMs, untilMs: next.slotTimeMs })).toHaveLength(1);
  });

  it('keeps when an instance was first scheduled, across reopen: a later time never moves it', async () => {
    const first = await world.openJournal();
    expect(await first.scheduledSince(SLOT.instance)).toBeNull();
    expect(await first.markScheduled(SLOT.instance, SLOT.slotTimeMs - 60_000)).toBe(SLOT.slotTimeMs - 60_000);
    expect(await first.markScheduled(SLOT.instance, SLOT.slotTimeMs + 60_000)).toBe(SLOT.slotTimeMs - 60_000);
    expect(await first.markScheduled('dca-eth', 5)).toBe(5);
    await first.close();
    const second = await world.openJournal();
    expect(await second.scheduledSince(SLOT.instance)).toBe(SLOT.slotTimeMs - 60_000);
    expect(await second.scheduledSince('dca-eth')).toBe(5);
    expect(await second.scheduledSince('never')).toBeNull();
    expect(await second.markScheduled(SLOT.instance, SLOT.slotTimeMs + 120_000)).toBe(SLOT.slotTimeMs - 60_000);
    // Not a slot: the instance still has none for lastSlot, and nothing is left open.
    expect(await second.lastSlot(SLOT.instance)).toBeNull();
    expect(await second.hasOpenWork()).toBe(false);
    await expect(second.markScheduled('', 1)).rejects.toMatchObject({ reason: 'invalid-argument' });
    await expect(second.markScheduled('x', 1.5)).rejects.toMatchObject({ reason: 'invalid-argument' });
    expect(await second.scheduledSince('x')).toBeNull();
  });

  it('refuses a slot time that is not a whole number of milliseconds', async () => {
    const journal = await world.openJournal();
    await expect(journal.claimSlot({ instance: 'x', slotTimeMs: 1.5, runId: null })).rejects.toMatchObject({ reason: 'invalid-argument' });
    await expect(journal.claimSlot({ instance: '', slotTimeMs: 1, runId: null })).rejects.toMatchObject({ reason: 'invalid-argument' });
  });
});

describe.each(JOURNAL_KINDS)('runs (%s journal)', (kind) => {
  beforeEach(() => {
    world.kind = kind;
  });

  it('records a run, marks one that never finished as interrupted, and finishes a run once', async () => {
    const journal = await world.openJournal();
    const crashed = await journal.startRun({ mode: 'live', pid: 10, version: '0.1.0' });
    world.nowMs += 1_000;
    const current = await journal.startRun({ mode: 'live', pid: 11, version: '0.1.0' });
    world.nowMs += 1_000;
    await journal.finishRun(current.runId, 'SIGTERM');
    await expect(journal.finishRun(current.runId, 'again')).rejects.toMatchObject({ reason: 'illegal-transition' });
    await expect(journal.finishRun('nope', 'x')).rejects.toMatchObject({ reason: 'not-found' });
    const runs = await journal.listRuns();
    expect(runs).toEqual([
      { runId: current.runId, mode: 'live', startedAtMs: world.nowMs - 1_000, endedAtMs: world.nowMs, pid: 11, version: '0.1.0', exitReason: 'SIGTERM' },
      { runId: crashed.runId, mode: 'live', startedAtMs: world.nowMs - 2_000, endedAtMs: null, pid: 10, version: '0.1.0', exitReason: 'interrupted' },
    ]);
  });

  it('refuses a run of another mode on a journal: a dry-run must not consume live slots', async () => {
    const journal = await world.openJournal();
    await journal.startRun({ mode: 'live', pid: 1, version: 'x' });
    await expect(journal.startRun({ mode: 'dry-run', pid: 1, version: 'x' })).rejects.toMatchObject({ code: 'E_STORE', reason: 'mode-mismatch' });
  });
});
