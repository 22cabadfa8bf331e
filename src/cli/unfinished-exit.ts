/**
 * Node ends a process whose work ran out, even while a command still awaits a promise nothing
 * will ever settle: the process would leave with 0 and say nothing, as if the command had done
 * its work. Watched here: an exit with 0 before `finished()` was called is reported on stderr and
 * made exit 1. An exit the program chose with a code of its own is left as it is.
 */
export interface ExitWatch {
  /** The command is done: its exit, whatever the code, is its own. */
  finished(): void;
}

export function watchUnfinishedExit(target: { on(event: 'exit', listener: (code: number) => void): unknown; exitCode?: number | string | null | undefined }, stderr: { write(text: string): unknown }): ExitWatch {
  let done = false;
  target.on('exit', (code) => {
    if (done || code !== 0) return;
    stderr.write('error: stacker ended before its command finished: it waited for something that never answered (a strategy whose decide never settles?)\n');
    target.exitCode = 1;
  });
  return {
    finished() {
      done = true;
    },
  };
}
