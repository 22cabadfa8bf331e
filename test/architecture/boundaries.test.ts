import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layers of the README ("Design"), as a rule the build checks: each folder of src/ may
 * import only from the folders listed for it (and from packages and Node's built-ins), and no
 * module may reach itself through its imports. A new import across the table fails here, with
 * the file and the line that broke it.
 */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  domain: [],
  // bin: the thread that scans half of a large candle file is an entry point too (see backtest).
  candles: ['domain', 'bin'],
  api: ['domain'],
  store: ['domain'],
  observability: ['domain', 'package.json'],
  exchange: ['domain', 'api'],
  sim: ['domain', 'candles', 'exchange'],
  sandbox: ['domain', 'api', 'candles', 'sim'],
  engine: ['domain', 'candles', 'exchange', 'store'],
  report: ['domain', 'store'],
  notify: ['domain'],
  config: ['domain', 'engine', 'store', 'strategies'],
  daemon: ['domain', 'api', 'config', 'engine', 'exchange', 'notify', 'observability', 'report', 'sim', 'store', 'package.json'],
  // bin: a comparison's worker thread is an entry point too, and turns the compile cache on as bin/stacker.js does.
  backtest: ['domain', 'api', 'bin', 'candles', 'config', 'engine', 'exchange', 'sim', 'store'],
  demo: ['domain', 'api', 'sandbox'],
  cli: ['*'],
};
/** Files at the top of src/ (the entry point) may import anything; `package.json` is read for the version. */
const TOP = '(top)';

const ROOT = join(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

interface Import {
  readonly from: string;
  readonly to: string;
  readonly line: number;
}

function importsOf(file: string): Import[] {
  const out: Import[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      for (const match of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
        out.push({ from: file, to: normalize(join(dirname(file), match[1] as string)), line: i + 1 });
      }
    });
  return out;
}

function layerOf(file: string): string {
  const rel = relative(SRC, file);
  if (rel.startsWith('..')) return relative(ROOT, file).split('/')[0] as string;
  return rel.includes('/') ? (rel.split('/')[0] as string) : TOP;
}

const files = [...sources(SRC), ...sources(join(ROOT, 'strategies'))];
const imports = files.flatMap(importsOf);

describe('the layers of src/', () => {
  it('every folder imports only from the folders below it', () => {
    const broken = imports
      .filter((i) => layerOf(i.from) !== 'strategies')
      .flatMap((i) => {
        const from = layerOf(i.from);
        const to = layerOf(i.to);
        if (from === to || from === TOP) return [];
        const allowed = ALLOWED[from];
        if (allowed === undefined) return [`${relative(ROOT, i.from)}: folder ${from} is not in the layer table`];
        if (allowed.includes('*') || allowed.includes(to)) return [];
        return [`${relative(ROOT, i.from)}:${i.line} imports ${relative(ROOT, i.to)}: ${from} may import only ${allowed.join(', ') || 'nothing of stacker'}`];
      });
    expect(broken).toEqual([]);
  });

  it('every folder of src/ has a row in the table', () => {
    const folders = readdirSync(SRC).filter((name) => statSync(join(SRC, name)).isDirectory());
    expect(folders.filter((f) => ALLOWED[f] === undefined)).toEqual([]);
  });

  it('no module reaches itself through its imports (no cycle, type imports included)', () => {
    const graph = new Map<string, string[]>(files.map((f) => [f, []]));
    for (const i of imports) if (graph.has(i.to)) graph.get(i.from)?.push(i.to);
    // Tarjan's strongly connected components: any with more than one file is a cycle.
    let counter = 0;
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const cycles: string[][] = [];
    const visit = (v: string): void => {
      index.set(v, counter);
      low.set(v, counter);
      counter += 1;
      stack.push(v);
      onStack.add(v);
      for (const w of graph.get(v) ?? []) {
        if (!index.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
      if (low.get(v) === index.get(v)) {
        const component: string[] = [];
        let w: string;
        do {
          w = stack.pop() as string;
          onStack.delete(w);
          component.push(relative(ROOT, w));
        } while (w !== v);
        if (component.length > 1) cycles.push(component.sort());
      }
    };
    for (const file of graph.keys()) if (!index.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });
});
