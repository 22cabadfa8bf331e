import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LogStream } from '../../src/observability/log-stream.ts';

/** script(1) (util-linux), which gives a command a terminal of its own. */
const hasScript = process.platform === 'linux' && spawnSync('script', ['--version']).status === 0;

/** A stderr whose pipe takes `room` bytes more, then refuses (EAGAIN) until the test makes room; or fails with `failing`. */
function pipe(room: number): { writeSync: (fd: number, data: Buffer) => number; got: () => string; room: number; failing: string | null } {
  const taken: Buffer[] = [];
  const stderr = {
    room,
    failing: null as string | null,
    got: () => Buffer.concat(taken).toString(),
    writeSync: (_fd: number, data: Buffer): number => {
      if (stderr.failing !== null) throw Object.assign(new Error(stderr.failing), { code: stderr.failing });
      if (stderr.room === 0) throw Object.assign(new Error('EAGAIN'), { code: 'EAGAIN' });
      const n = Math.min(stderr.room, data.length);
      taken.push(Buffer.from(data.subarray(0, n)));
      stderr.room -= n;
      return n;
    },
  };
  return stderr;
}

const later = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('the log stream a daemon writes its JSON lines to', () => {
  it('writes each line at once while the reader reads', () => {
    const stderr = pipe(1_000);
    const stream = new LogStream({ writeSync: stderr.writeSync });
    stream.write('one\n');
    stream.write('two\n');
    expect(stderr.got()).toBe('one\ntwo\n');
  });

  it('queues what a full pipe does not take, the end of a line first, and writes it in order once the reader reads again', async () => {
    const stderr = pipe(5);
    const stream = new LogStream({ writeSync: stderr.writeSync, retryMs: 1 });
    stream.write('abcdef\n');
    stream.write('next\n');
    expect(stderr.got()).toBe('abcde');
    stderr.room = 1_000;
    await later(20);
    expect(stderr.got()).toBe('abcdef\nnext\n');
    expect(stream.dropped).toBe(0);
  });

  it('drops what does not fit while the reader does not read, counts it, and says so once a write works again', async () => {
    const stderr = pipe(0);
    const stream = new LogStream({ writeSync: stderr.writeSync, maxQueued: 12, retryMs: 1 });
    const told: number[] = [];
    stream.onDropped = (dropped) => told.push(dropped);
    stream.write('first\n');
    for (let i = 0; i < 5; i += 1) stream.write(`line${i}\n`);
    expect(stream.dropped).toBe(4);
    stderr.room = 1_000;
    await later(20);
    expect(stderr.got()).toBe('first\nline0\n');
    expect(told).toEqual([4]);
  });

  it('never throws when stderr fails (a full disk): the line is dropped and counted, and the next ones written', async () => {
    const stderr = pipe(1_000);
    const stream = new LogStream({ writeSync: stderr.writeSync });
    const told: number[] = [];
    stream.onDropped = (dropped) => told.push(dropped);
    stderr.failing = 'ENOSPC';
    expect(() => stream.write('lost\n')).not.toThrow();
    expect(() => stream.write('lost too\n')).not.toThrow();
    expect(stream.dropped).toBe(2);
    stderr.failing = null;
    stream.write('kept\n');
    await later(5);
    expect(stderr.got()).toBe('kept\n');
    expect(told).toEqual([2]);
  });

  it('ends a line cut short by a failing disk before the next one, so a reader of JSON lines never sees two glued', async () => {
    const stderr = pipe(6);
    const stream = new LogStream({ writeSync: stderr.writeSync, retryMs: 1 });
    stream.write('{"a":1}\n');
    expect(stderr.got()).toBe('{"a":1');
    stderr.failing = 'ENOSPC';
    await later(10);
    stderr.failing = null;
    stderr.room = 1_000;
    stream.write('{"b":2}\n');
    expect(stderr.got()).toBe('{"a":1\n{"b":2}\n');
    expect(stream.dropped).toBe(1);
  });

  it('tries once more at exit, and drops (counted) what a full pipe still refuses, rather than wait for it', () => {
    const stderr = pipe(0);
    const stream = new LogStream({ writeSync: stderr.writeSync, retryMs: 60_000 });
    stream.write('waiting\n');
    stream.write('also\n');
    stderr.room = 8;
    stream.flushSync();
    expect(stderr.got()).toBe('waiting\n');
    expect(stream.dropped).toBe(1);
  });

  it('lets a process whose stderr pipe nobody reads go on and end (a log driver that stopped reading)', async () => {
    // A child logs 20 MB through the daemon's logger to a pipe this test never reads (64 KB fill
    // it), then says it is alive on stdout and ends. Written synchronously, it waited for ever.
    const script = `
      const { createLogger } = await import(${JSON.stringify(new URL('../../src/observability/logger.ts', import.meta.url).href)});
      const logger = await createLogger({ level: 'info', format: 'json' });
      const filler = 'x'.repeat(200);
      for (let i = 0; i < 100000; i += 1) logger.info({ event: 'filler', i, filler }, 'a line');
      await new Promise((resolve) => setTimeout(resolve, 50));
      process.stdout.write('alive\\n');
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    try {
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(out).toBe('alive\n');
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);

  it.skipIf(!hasScript)('lets a process whose terminal stops taking output go on and end (docker run -t whose log driver blocks, Ctrl-S)', async () => {
    // The child logs in the terminal's (pretty) format to a terminal script(1) gives it; script
    // writes what it reads to a pipe this test never reads, so the terminal fills and stops
    // taking output. The child then writes a file and ends. Written to a terminal that waits, it waited for ever.
    const dir = mkdtempSync(join(tmpdir(), 'stacker-tty-'));
    const alive = join(dir, 'alive');
    const script = `
      const { createLogger } = await import(${JSON.stringify(new URL('../../src/observability/logger.ts', import.meta.url).href)});
      const logger = await createLogger({ level: 'info' });
      if (!process.stderr.isTTY) throw new Error('not a terminal');
      const filler = 'x'.repeat(200);
      for (let i = 0; i < 20000; i += 1) logger.info({ event: 'filler', i, filler }, 'a line');
      (await import('node:fs')).writeFileSync(${JSON.stringify(alive)}, 'alive');
    `;
    const file = join(dir, 'child.mjs');
    writeFileSync(file, script);
    const child = spawn('script', ['-q', '-e', '-c', `${process.execPath} ${file}`, '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const deadline = Date.now() + 20_000;
      while (!existsSync(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(existsSync(alive)).toBe(true);
    } finally {
      child.kill('SIGKILL');
      spawnSync('pkill', ['-KILL', '-f', file]);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
