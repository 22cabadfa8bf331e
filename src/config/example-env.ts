import { COMMON_PARAMS, type ParamSpec, type Strategy } from '../engine/contract.ts';

/**
 * The commented example instance file of a strategy, written from its declaration: every engine
 * key and every key of the strategy, each with its rule, default and what it does. Required keys
 * and keys with an example are set; the others are shown commented out. It loads without a
 * problem against the sandbox's demo account (a test checks it for every shipped strategy).
 */
export function exampleEnvFile(strategy: Strategy<unknown>): string {
  const lines = [
    `# ${strategy.name}: ${strategy.describe}`,
    '#',
    '# One file is one strategy instance, named after the file: its journal, budgets and clientOrderIds',
    '# belong to that name. Format: dotenv (KEY=value; quote values with blanks; # starts a comment).',
    '# Every key is checked at start, and a key neither the strategy nor the engine declares is refused.',
    '',
    '# ---- Engine keys (the same for every strategy) ----',
    '',
    ...COMMON_PARAMS.flatMap((spec) => block(spec, spec.key === 'STRATEGY' ? strategy.name : spec.key === 'SCHEDULE' ? spec.example : undefined)),
    `# ---- ${strategy.name} keys ----`,
    '',
    ...strategy.params.flatMap((spec) => block(spec, undefined)),
  ];
  return `${lines.join('\n').trimEnd()}\n`;
}

function block(spec: ParamSpec, setTo: string | undefined): string[] {
  const status = spec.required ? 'required' : spec.default !== undefined ? `default ${spec.default}` : 'optional';
  const comment = wrap(`${spec.key} (${status}; ${spec.rule}): ${spec.description}`).map((line) => `# ${line}`);
  const value = setTo ?? spec.example ?? spec.default;
  if (value === undefined) return [...comment, `# ${spec.key}=`, ''];
  const set = setTo !== undefined || (spec.example !== undefined && spec.exampleCommented !== true && (spec.required || !COMMON_KEYS_COMMENTED.has(spec.key)));
  return [...comment, `${set ? '' : '# '}${spec.key}=${value}`, ''];
}

/** Engine keys left to their defaults in an example: shown, not set. */
const COMMON_KEYS_COMMENTED: ReadonlySet<string> = new Set(COMMON_PARAMS.filter((spec) => !spec.required).map((spec) => spec.key));

/** Comment lines of at most ~96 characters, broken at blanks. */
function wrap(text: string): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + word.length + 1 > 96) {
      out.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') out.push(line);
  return out;
}
