import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { ConfigError, type InputProblem } from '../../src/domain/errors.ts';

/** A temp folder with a global env file and a strategies folder, removed by `cleanup`. */
export class ConfigWorld {
  readonly dir: string;
  readonly strategiesDir: string;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'stacker-config-'));
    this.strategiesDir = join(this.dir, 'strategies');
    mkdirSync(this.strategiesDir);
  }

  /** Write a file under the world (folders created); returns its path. */
  file(relative: string, text: string): string {
    const path = join(this.dir, relative);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
    return path;
  }

  /** Write config/strategies-style instance file NAME.env. */
  instance(name: string, text: string): string {
    return this.file(join('strategies', `${name}.env`), text);
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export const DCA = ['STRATEGY=dca', 'SCHEDULE="0 9 * * *"', 'MARKET=BTC_USDT', 'AMOUNT=0.0005'].join('\n');
export const SWEEP = ['STRATEGY=flex-sweep', 'SCHEDULE="30 8 * * *"', 'TICKER=USDT', 'MODE=all'].join('\n');
export const REPORT = ['STRATEGY=balance-report', 'SCHEDULE="0 */6 * * *"'].join('\n');

/** The ConfigError a promise rejects with (failing the test when it resolves or throws anything else). */
export async function configErrorOf(promise: Promise<unknown>): Promise<ConfigError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

/** Problems as `source: field: rule` lines, the way the CLI prints them. */
export function lines(problems: readonly InputProblem[]): string[] {
  return problems.map((p) => `${p.source === undefined ? '' : `${p.source}: `}${p.field}: ${p.rule}`);
}

/** The problems of one source and field. */
export function about(error: ConfigError, source: string | undefined, field: string): InputProblem[] {
  return error.problems.filter((p) => p.source === source && p.field === field);
}
