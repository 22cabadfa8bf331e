import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JOURNAL_KINDS, TempWorld } from './helpers.ts';

let world: TempWorld;
beforeEach(() => {
  world = new TempWorld();
});
afterEach(async () => {
  await world.cleanup();
});

describe.each(JOURNAL_KINDS)('operator controls: what the status API switched survives a restart (%s journal)', (kind) => {
  beforeEach(() => {
    world.kind = kind;
  });

  it('starts with nothing paused and the kill switch off', async () => {
    const journal = await world.openJournal();
    expect(await journal.operatorControls()).toEqual({ paused: new Map(), killSwitchSinceMs: null, accountKillSwitches: new Map() });
  });

  it('pauses and resumes an instance, keeping the time of the first pause', async () => {
    const journal = await world.openJournal();
    const pausedAt = world.nowMs;
    expect((await journal.setOperatorControl({ control: 'pause', instance: 'dca-btc', on: true })).paused).toEqual(new Map([['dca-btc', pausedAt]]));
    world.nowMs += 60_000;
    await journal.setOperatorControl({ control: 'pause', instance: 'dca-btc', on: true });
    await journal.setOperatorControl({ control: 'pause', instance: 'dca-eth', on: true });
    expect((await journal.operatorControls()).paused).toEqual(new Map([['dca-btc', pausedAt], ['dca-eth', world.nowMs]]));
    expect((await journal.setOperatorControl({ control: 'pause', instance: 'dca-btc', on: false })).paused).toEqual(new Map([['dca-eth', world.nowMs]]));
    // Resuming what runs changes nothing.
    expect((await journal.setOperatorControl({ control: 'pause', instance: 'dca-btc', on: false })).paused.has('dca-btc')).toBe(false);
  });

  it('turns the kill switch on and off, apart from pauses', async () => {
    const journal = await world.openJournal();
    await journal.setOperatorControl({ control: 'pause', instance: 'dca-btc', on: true });
    expect((await journal.setOperatorControl({ control: 'kill-switch', on: true })).killSwitchSinceMs).toBe(world.nowMs);
    const off = await journal.setOperatorControl({ control: 'kill-switch', on: false });
    expect(off).toEqual({ paused: new Map([['dca-btc', world.nowMs]]), killSwitchSinceMs: null, accountKillSwitches: new Map() });
  });

  it('keeps pauses and the kill switch across a close and reopen', async () => {
    const first = await world.openJournal();
    await first.setOperatorControl({ control: 'pause', instance: 'dca-btc', on: true });
    await first.setOperatorControl({ control: 'kill-switch', on: true });
    await first.setOperatorControl({ control: 'kill-switch', account: 'kids', on: true });
    await first.close();
    const second = await world.openJournal();
    expect(await second.operatorControls()).toEqual({ paused: new Map([['dca-btc', world.nowMs]]), killSwitchSinceMs: world.nowMs, accountKillSwitches: new Map([['kids', world.nowMs]]) });
  });

  it("turns one account's kill switch on and off, apart from the one for every account and from the others", async () => {
    const journal = await world.openJournal();
    const kidsAt = world.nowMs;
    expect((await journal.setOperatorControl({ control: 'kill-switch', account: 'kids', on: true })).accountKillSwitches).toEqual(new Map([['kids', kidsAt]]));
    world.nowMs += 60_000;
    await journal.setOperatorControl({ control: 'kill-switch', account: 'kids', on: true });
    const both = await journal.setOperatorControl({ control: 'kill-switch', account: 'main', on: true });
    expect(both).toEqual({ paused: new Map(), killSwitchSinceMs: null, accountKillSwitches: new Map([['kids', kidsAt], ['main', world.nowMs]]) });
    expect((await journal.setOperatorControl({ control: 'kill-switch', on: true })).accountKillSwitches.size).toBe(2);
    const kidsOff = await journal.setOperatorControl({ control: 'kill-switch', account: 'kids', on: false });
    expect(kidsOff).toEqual({ paused: new Map(), killSwitchSinceMs: world.nowMs, accountKillSwitches: new Map([['main', world.nowMs]]) });
    await expect(journal.setOperatorControl({ control: 'kill-switch', account: '', on: true })).rejects.toMatchObject({ reason: 'invalid-argument' });
  });

  it('refuses a pause without an instance name', async () => {
    const journal = await world.openJournal();
    await expect(journal.setOperatorControl({ control: 'pause', instance: '', on: true })).rejects.toMatchObject({ reason: 'invalid-argument' });
    expect((await journal.operatorControls()).paused.size).toBe(0);
  });
});
