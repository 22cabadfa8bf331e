/**
 * Reads a Dockerfile the way Docker does, for the two places that check the image without a
 * Docker engine: scripts/dockerfile-steps.sh (replays the build in a scratch folder) and
 * test/docker/dockerfile.test.ts (asserts the invariants). The build context: dockerignore.ts.
 *
 * Covers what stacker's Dockerfile uses: comments, line continuations, stages, JSON (exec) and
 * shell forms, COPY flags, ENV pairs, HEALTHCHECK options. Heredocs and a changed escape
 * character are refused rather than misread.
 *
 * As a command (`node scripts/dockerfile.ts <what> …`, from the repository root):
 *   context <dest>        stage the build context in <dest>, honouring .dockerignore
 *   from                  one line per stage: <image> [<stage name>]
 *   copies <stage>        one line per COPY: <from or -> TAB <dest> TAB <source> [TAB <source>…]
 *   runs <stage>          the RUN commands of a stage, NUL-terminated
 *   workdir <stage>       the stage's last WORKDIR
 *   env <stage>           KEY=value lines
 *   user <stage>          the stage's last USER
 *   volumes <stage>       one path per line
 *   healthcheck           the probe's exec-form arguments, NUL-terminated
 *   entrypoint            ENTRYPOINT then CMD arguments, NUL-terminated
 * A <stage> is a stage name, an index, or `final`.
 */
import { readFileSync } from 'node:fs';
import { stageContext } from './dockerignore.ts';

export interface Instruction {
  /** Upper case: FROM, RUN, COPY… */
  readonly keyword: string;
  /** Everything after the keyword, continuation lines joined with a space. */
  readonly args: string;
  /** 1-based line where the instruction starts. */
  readonly line: number;
}

export interface Stage {
  readonly index: number;
  readonly image: string;
  readonly name: string | null;
  readonly instructions: readonly Instruction[];
}

export interface Dockerfile {
  /** ARG lines before the first FROM. */
  readonly preamble: readonly Instruction[];
  readonly stages: readonly Stage[];
}

export function parseDockerfile(text: string): Dockerfile {
  const instructions: Instruction[] = [];
  const lines = text.split(/\r?\n/);
  let pending: { parts: string[]; line: number } | null = null;
  lines.forEach((raw, index) => {
    const trimmed = raw.trim();
    if (pending === null && /^#\s*escape\s*=/i.test(trimmed)) throw new Error(`line ${index + 1}: a changed escape character is not supported`);
    // Comments and blank lines, also inside a continued instruction (Docker drops them there too).
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const continued = trimmed.endsWith('\\');
    const part = continued ? trimmed.slice(0, -1).trim() : trimmed;
    if (pending === null) pending = { parts: [part], line: index + 1 };
    else pending.parts.push(part);
    if (!continued) {
      instructions.push(toInstruction(pending.parts.join(' '), pending.line));
      pending = null;
    }
  });
  if (pending !== null) throw new Error('the Dockerfile ends inside a continued line');

  const preamble: Instruction[] = [];
  const stages: { index: number; image: string; name: string | null; instructions: Instruction[] }[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const words = instruction.args.split(/\s+/).filter((word) => !word.startsWith('--'));
      const image = words[0];
      if (image === undefined) throw new Error(`line ${instruction.line}: FROM without an image`);
      const name = words.length >= 3 && words[1]?.toUpperCase() === 'AS' ? (words[2] ?? null) : null;
      stages.push({ index: stages.length, image, name, instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (stage === undefined) {
      if (instruction.keyword !== 'ARG') throw new Error(`line ${instruction.line}: ${instruction.keyword} before the first FROM`);
      preamble.push(instruction);
    } else {
      stage.instructions.push(instruction);
    }
  }
  if (stages.length === 0) throw new Error('the Dockerfile has no FROM');
  return { preamble, stages };
}

function toInstruction(text: string, line: number): Instruction {
  const match = /^([A-Za-z]+)\s*(.*)$/.exec(text);
  if (match === null) throw new Error(`line ${line}: not an instruction: ${text}`);
  const args = (match[2] ?? '').trim();
  if (/<<-?\w/.test(args) && !/^\[/.test(args)) throw new Error(`line ${line}: heredocs are not supported`);
  return { keyword: (match[1] as string).toUpperCase(), args, line };
}

/** A stage by name, index or `final`. */
export function stage(file: Dockerfile, which: string): Stage {
  const found = which === 'final' ? file.stages.at(-1) : /^\d+$/.test(which) ? file.stages[Number(which)] : file.stages.find((s) => s.name === which);
  if (found === undefined) throw new Error(`no stage ${JSON.stringify(which)}`);
  return found;
}

export function instructions(s: Stage, keyword: string): Instruction[] {
  return s.instructions.filter((i) => i.keyword === keyword);
}

/** JSON (exec) form as an array of strings, or null for the shell form. */
export function execForm(args: string): string[] | null {
  if (!args.startsWith('[')) return null;
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string')) throw new Error(`not a JSON array of strings: ${args}`);
  return parsed;
}

export interface Copy {
  /** `--from=` stage or image; null for the build context. */
  readonly from: string | null;
  readonly chown: string | null;
  readonly sources: readonly string[];
  readonly dest: string;
  readonly line: number;
}

export function copies(s: Stage): Copy[] {
  return [...instructions(s, 'COPY'), ...instructions(s, 'ADD')].sort((a, b) => a.line - b.line).map((instruction) => {
    let from: string | null = null;
    let chown: string | null = null;
    const words = execForm(instruction.args) ?? instruction.args.split(/\s+/);
    const rest: string[] = [];
    for (const word of words) {
      if (rest.length === 0 && word.startsWith('--')) {
        const [flag, value = ''] = word.slice(2).split('=', 2) as [string, string?];
        if (flag === 'from') from = value;
        else if (flag === 'chown') chown = value;
        continue;
      }
      rest.push(word);
    }
    const dest = rest.pop();
    if (dest === undefined || rest.length === 0) throw new Error(`line ${instruction.line}: COPY needs a source and a destination`);
    return { from, chown, sources: rest, dest, line: instruction.line };
  });
}

/** ENV pairs, in order (`KEY=value …`, or the old `KEY value` form). */
export function envPairs(s: Stage): [string, string][] {
  const pairs: [string, string][] = [];
  for (const instruction of instructions(s, 'ENV')) {
    if (!instruction.args.includes('=')) {
      const [key, ...value] = instruction.args.split(/\s+/);
      if (key !== undefined) pairs.push([key, value.join(' ')]);
      continue;
    }
    const pattern = /([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g;
    for (const match of instruction.args.matchAll(pattern)) {
      const raw = match[2] ?? '';
      const value = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw.startsWith("'") ? raw.slice(1, -1) : raw;
      pairs.push([match[1] as string, value]);
    }
  }
  return pairs;
}

export function last(s: Stage, keyword: string): string | null {
  return instructions(s, keyword).at(-1)?.args ?? null;
}

export function volumes(s: Stage): string[] {
  return instructions(s, 'VOLUME').flatMap((instruction) => execForm(instruction.args) ?? instruction.args.split(/\s+/));
}

export interface Healthcheck {
  readonly options: Readonly<Record<string, string>>;
  /** Exec form arguments; null for the shell form or NONE. */
  readonly command: readonly string[] | null;
  readonly shell: string | null;
}

export function healthcheck(s: Stage): Healthcheck | null {
  const args = last(s, 'HEALTHCHECK');
  if (args === null) return null;
  const options: Record<string, string> = {};
  let rest = args;
  for (let match = /^--([a-z-]+)=(\S+)\s+/.exec(rest); match !== null; match = /^--([a-z-]+)=(\S+)\s+/.exec(rest)) {
    options[match[1] as string] = match[2] as string;
    rest = rest.slice(match[0].length);
  }
  if (/^NONE$/i.test(rest)) return { options, command: null, shell: null };
  const cmd = /^CMD\s+(.*)$/i.exec(rest);
  if (cmd === null) throw new Error(`HEALTHCHECK without CMD: ${args}`);
  const body = cmd[1] as string;
  const command = execForm(body);
  return { options, command, shell: command === null ? body : null };
}

// ---- command line --------------------------------------------------------------------------

function main(argv: readonly string[]): void {
  const [what, arg] = argv;
  const out = (text: string): void => void process.stdout.write(text);
  if (what === 'context') {
    if (arg === undefined) throw new Error('usage: context <dest>');
    const { files, ignored } = stageContext(process.cwd(), arg);
    out(`${files} files; left out: ${ignored.join(' ')}\n`);
    return;
  }
  const file = parseDockerfile(readFileSync('Dockerfile', 'utf8'));
  const final = stage(file, 'final');
  switch (what) {
    case 'from':
      for (const s of file.stages) out(`${s.image}${s.name === null ? '' : ` ${s.name}`}\n`);
      return;
    case 'copies':
      for (const c of copies(stage(file, arg ?? 'final'))) out(`${c.from ?? '-'}\t${c.dest}\t${c.sources.join('\t')}\n`);
      return;
    case 'runs':
      for (const run of instructions(stage(file, arg ?? 'final'), 'RUN')) out(`${run.args}\0`);
      return;
    case 'workdir':
      out(`${last(stage(file, arg ?? 'final'), 'WORKDIR') ?? '/'}\n`);
      return;
    case 'env':
      for (const [key, value] of envPairs(stage(file, arg ?? 'final'))) out(`${key}=${value}\n`);
      return;
    case 'user':
      out(`${last(stage(file, arg ?? 'final'), 'USER') ?? 'root'}\n`);
      return;
    case 'volumes':
      for (const volume of volumes(stage(file, arg ?? 'final'))) out(`${volume}\n`);
      return;
    case 'healthcheck': {
      const check = healthcheck(final);
      if (check?.command == null) throw new Error('no exec-form HEALTHCHECK');
      for (const word of check.command) out(`${word}\0`);
      return;
    }
    case 'entrypoint': {
      const words = [...(execForm(last(final, 'ENTRYPOINT') ?? '[]') ?? []), ...(execForm(last(final, 'CMD') ?? '[]') ?? [])];
      for (const word of words) out(`${word}\0`);
      return;
    }
    default:
      throw new Error(`unknown request ${JSON.stringify(what)}; see the comment at the top of scripts/dockerfile.ts`);
  }
}

if (import.meta.main) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`dockerfile.ts: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
