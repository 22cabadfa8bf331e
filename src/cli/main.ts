import { CommanderError } from 'commander';
import { EXIT } from '../domain/errors.ts';
import type { RunState } from './context.ts';
import { type Io, processIo } from './output.ts';
import { buildProgram } from './program.ts';
import { reportError } from './report-error.ts';

/**
 * Run one command line and return its exit code. Never throws, never calls process.exit:
 * the caller decides how to leave (src/cli.ts sets process.exitCode).
 */
export async function runCli(argv: readonly string[], io: Io = processIo): Promise<number> {
  // --json before any `--`: known before commander parses, so that its usage errors come as JSON too.
  const end = argv.indexOf('--');
  const state: RunState = { json: (end === -1 ? argv : argv.slice(0, end)).includes('--json'), verbose: false, lookupHint: undefined };
  const program = buildProgram(io, state);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return state.exitCode ?? EXIT.ok;
  } catch (error) {
    // Commander has already printed its message (naming the flag); help and --version exit 0,
    // every usage error (unknown flag, missing value, missing command) is bad input.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.badInput;
    return reportError(error, io, state);
  }
}
