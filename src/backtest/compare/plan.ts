import { InputError } from '../../domain/errors.ts';

/** Most backtests one comparison runs: a sweep's cross product grows fast. */
export const MAX_RUNS = 64;

/** One backtest of a comparison: its strategy files and the keys it sets over them. */
export interface RunSpec {
  readonly label: string;
  readonly files: readonly string[];
  readonly overrides: Readonly<Record<string, string>>;
}

const KEY = /^[A-Z][A-Z0-9_]*$/;

/**
 * The runs of `--sweep KEY=v1,v2 …` over one strategy file: the cross product of the values, in
 * the order the flags and values were given (the first key varies slowest); `\,` is a comma
 * inside a value. Refuses a malformed flag, a key given twice, an empty value, a schedule cut
 * at a comma of its own, and more than MAX_RUNS runs, before anything runs.
 */
export function sweepRuns(file: string, sweeps: readonly string[]): RunSpec[] {
  const axes: Array<{ key: string; values: string[] }> = [];
  for (const sweep of sweeps) {
    const at = sweep.indexOf('=');
    const key = at === -1 ? '' : sweep.slice(0, at);
    if (!KEY.test(key)) throw InputError.one('--sweep', `must be KEY=value1,value2,… with KEY an instance file key in capitals, e.g. AMOUNT_QUOTE=10,20,50 (got ${JSON.stringify(sweep)})`);
    if (axes.some((a) => a.key === key)) throw InputError.one('--sweep', `${key} is swept twice; give all its values in one --sweep ${key}=…`);
    const values = sweepValues(sweep.slice(at + 1));
    if (values.some((v) => v === '')) throw InputError.one('--sweep', `${key} has an empty value (got ${JSON.stringify(sweep)})`);
    if (new Set(values).size !== values.length) throw InputError.one('--sweep', `${key} lists a value twice`);
    // A cron list's comma read as the sweep's: `0 9 * * 1,4` came out as `0 9 * * 1` and `4`.
    const cut = key === 'SCHEDULE' ? values.find((v) => v.split(/\s+/).length < 5) : undefined;
    if (cut !== undefined) throw InputError.one('--sweep', `SCHEDULE value ${JSON.stringify(cut)} is no schedule: commas separate the sweep's values; write a comma inside a schedule as \\, (SCHEDULE=0 9 * * 1\\,4)`);
    axes.push({ key, values });
  }
  const count = axes.reduce((n, a) => n * a.values.length, 1);
  if (count > MAX_RUNS) {
    throw InputError.one('--sweep', `${axes.map((a) => a.values.length).join(' × ')} = ${count} runs; at most ${MAX_RUNS}: sweep fewer values`);
  }
  let combos: Array<Record<string, string>> = [{}];
  for (const axis of axes) combos = combos.flatMap((combo) => axis.values.map((value) => ({ ...combo, [axis.key]: value })));
  return combos.map((overrides) => ({ label: Object.entries(overrides).map(([k, v]) => `${k}=${v}`).join(' '), files: [file], overrides }));
}

/**
 * A sweep's values: split at each comma not written `\,` (a value with commas of its own, a cron
 * list such as `0 9 * * 1\,4`, keeps them), each trimmed.
 */
function sweepValues(text: string): string[] {
  return text
    .split(/(?<!\\),/)
    .map((value) => value.replaceAll('\\,', ',').trim());
}

/** Several strategy files side by side: one run each, on its own copy of the wallet. */
export function sideBySideRuns(files: readonly string[], labelOf: (file: string) => string): RunSpec[] {
  if (files.length > MAX_RUNS) throw InputError.one('--strategy', `${files.length} files; at most ${MAX_RUNS} side by side`);
  const twice = files.find((file, index) => files.indexOf(file) !== index);
  if (twice !== undefined) throw InputError.one('--strategy', `${twice} is given twice: each file is one run of the comparison`);
  const labels = files.map(labelOf);
  // Two files of one instance name (a/dca.env, b/dca.env) are told apart by their paths: two rows named alike say nothing.
  return files.map((file, index) => ({ label: labels.filter((label) => label === labels[index]).length > 1 ? file : (labels[index] as string), files: [file], overrides: {} }));
}
