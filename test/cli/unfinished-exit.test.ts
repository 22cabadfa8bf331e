import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { watchUnfinishedExit } from '../../src/cli/unfinished-exit.ts';

function fakeProcess(): EventEmitter & { exitCode?: number | string | null | undefined } {
  return new EventEmitter();
}

describe('a process whose work ran out before its command finished', () => {
  it('leaves with 1 and says so, instead of 0 as if the command had done its work', () => {
    const target = fakeProcess();
    const written: string[] = [];
    watchUnfinishedExit(target, { write: (text: string) => written.push(text) });
    target.emit('exit', 0);
    expect(target.exitCode).toBe(1);
    expect(written.join('')).toContain('ended before its command finished');
  });

  it('leaves a finished command, or an exit with a code of its own (a second SIGTERM: 143), as it is', () => {
    for (const [finish, code] of [[true, 0], [false, 143]] as const) {
      const target = fakeProcess();
      const written: string[] = [];
      const watch = watchUnfinishedExit(target, { write: (text: string) => written.push(text) });
      if (finish) watch.finished();
      target.emit('exit', code);
      expect(target.exitCode).toBeUndefined();
      expect(written).toEqual([]);
    }
  });
});
