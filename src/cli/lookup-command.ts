import type { GlobalFlags } from './context.ts';
import { shellWord } from './shell-word.ts';

/**
 * The command that finds out whether a write whose answer was lost happened. It must ask the
 * account and exchange the write went to: a lookup on the default key's account would show
 * nothing of an order or withdrawal made with --account's key, and whoever reads that would send
 * it again. So the flags that chose them go with it, as given, quoted for the shell.
 */
export function lookupCommand(words: readonly string[], given: GlobalFlags): string {
  const all = ['stacker', ...words];
  if (given.account !== undefined) all.push('--account', given.account);
  if (given.baseUrl !== undefined) all.push('--base-url', given.baseUrl);
  if (given.region !== undefined) all.push('--region', given.region);
  if (given.envFile !== undefined) all.push('--env-file', given.envFile);
  return all.map(shellWord).join(' ');
}
