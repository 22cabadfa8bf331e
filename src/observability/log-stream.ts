import { writeSync as fsWriteSync } from 'node:fs';

/**
 * Where a daemon's JSON log lines go: stderr, written so that its reader can never stop the
 * daemon. pino's synchronous destination, meeting a pipe whose reader stopped reading (a log
 * driver that blocks, `stacker run | (sleep 600)`), tried again without end: the slot in flight
 * stopped between its journalled send and the request, the status page and SIGTERM went
 * unanswered. A write that failed (stderr on a full disk) threw into whatever logged, an order's
 * send among them.
 *
 * Each line is written at once, as before (in order with the command's own text on stderr, and
 * nothing left behind at exit), on a stderr that does not wait: what a full pipe does not take
 * is queued, and tried again on a timer while the daemon goes on. The queue is bounded; lines
 * that do not fit, and lines a write failed to deliver, are dropped and counted, and once a
 * write works again `onDropped` is told how many (the logger says so in a line of its own).
 * Nothing here throws.
 */
export interface LogStreamOptions {
  readonly fd?: number;
  /** The most the queue holds, in bytes; lines beyond it are dropped. */
  readonly maxQueued?: number;
  /** How long to wait before writing again after the reader's pipe was full (EAGAIN). */
  readonly retryMs?: number;
  /** The write, replaceable in tests. */
  readonly writeSync?: (fd: number, data: Buffer) => number;
}

/** A few minutes of a busy daemon's lines. */
const MAX_QUEUED = 4 * 1024 * 1024;
const RETRY_MS = 100;

export class LogStream {
  readonly #fd: number;
  readonly #maxQueued: number;
  readonly #retryMs: number;
  readonly #writeSync: (fd: number, data: Buffer) => number;
  /** What a full pipe did not take yet, the first entry perhaps a line's unwritten end. */
  #queue: Array<{ data: Buffer; lines: number; started?: boolean }> = [];
  /** A line was cut short (its start written, its end dropped): the next line written starts on a new one. */
  #cut = false;
  #queued = 0;
  #retry: NodeJS.Timeout | null = null;
  #dropped = 0;
  #told = 0;
  /** Told how many lines were dropped in all, when a write works again after some were. */
  onDropped: ((dropped: number) => void) | null = null;

  constructor(options: LogStreamOptions = {}) {
    this.#fd = options.fd ?? 2;
    this.#maxQueued = options.maxQueued ?? MAX_QUEUED;
    this.#retryMs = options.retryMs ?? RETRY_MS;
    // Node makes a pipe on stderr one that does not wait once it opens its stream: without it
    // a write to a full pipe would wait in the kernel, where nothing here can help. A terminal
    // it opens afresh (its own file description, not the shell's) and makes wait: that one is
    // written to instead, made not to wait (a terminal stopped, `docker run -t` whose log
    // driver blocks, Ctrl-S, froze the daemon as a full pipe did).
    if (this.#fd === 2 && options.writeSync === undefined) this.#fd = stderrFd();
    this.#writeSync = options.writeSync ?? ((fd, data) => fsWriteSync(fd, data));
    liveStreams.add(this);
  }

  /** Lines dropped so far. */
  get dropped(): number {
    return this.#dropped;
  }

  write(line: string): void {
    const data = Buffer.from(line);
    if (this.#queue.length > 0) {
      if (this.#queued + data.length > this.#maxQueued) this.#dropped += 1;
      else this.#enqueue(data, 1);
      return;
    }
    this.#enqueue(data, 1);
    this.#drain();
  }

  /** One more try at what is queued: before the process exits (what a full pipe still refuses is dropped). */
  flushSync(): void {
    this.#drain();
    for (const chunk of this.#queue) this.#dropped += chunk.lines;
    this.#queue = [];
    this.#queued = 0;
  }

  #enqueue(data: Buffer, lines: number): void {
    this.#queue.push({ data, lines });
    this.#queued += data.length;
  }

  /** Writes the queue in order until it is empty or the pipe is full; then tries again later. */
  #drain(): void {
    while (this.#queue.length > 0) {
      const chunk = this.#queue[0] as { data: Buffer; lines: number; started?: boolean };
      // After a line cut short, the next begins with the newline that ends it: a reader of JSON
      // lines would otherwise see two lines glued, and lose both.
      const data = this.#cut && chunk.started !== true ? Buffer.concat([NEWLINE, chunk.data]) : chunk.data;
      let written: number;
      try {
        written = this.#writeSync(this.#fd, data);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
          this.#later();
          return;
        }
        // ENOSPC, EPIPE, EBADF: this line is lost; the next ones may fare better.
        this.#queue.shift();
        this.#queued -= chunk.data.length;
        this.#dropped += chunk.lines;
        if (chunk.started === true) this.#cut = true;
        continue;
      }
      if (data !== chunk.data) {
        // The newline went first: written, the cut line is ended; not, it is still to end.
        if (written === 0) {
          this.#later();
          return;
        }
        this.#cut = false;
        written -= 1;
      }
      if (written < chunk.data.length) {
        this.#queued -= written;
        chunk.data = chunk.data.subarray(written);
        chunk.started = true;
        this.#later();
        return;
      }
      this.#queue.shift();
      this.#queued -= chunk.data.length;
      if (this.#dropped > this.#told) {
        const dropped = this.#dropped;
        this.#told = dropped;
        // Told after this write, not inside it: the logger is told in a line of its own.
        setImmediate(() => this.onDropped?.(dropped));
      }
    }
  }

  #later(): void {
    if (this.#retry !== null) return;
    this.#retry = setTimeout(() => {
      this.#retry = null;
      this.#drain();
    }, this.#retryMs);
    // Lines waiting for a reader do not keep a finished process alive.
    this.#retry.unref();
  }
}

const NEWLINE = Buffer.from('\n');

const liveStreams = new Set<LogStream>();

/** One more try at what every log stream has queued (see LogStream.flushSync): before the process exits. */
function flushLogStreams(): void {
  for (const stream of liveStreams) stream.flushSync();
}

process.once('exit', flushLogStreams);

/**
 * The descriptor stderr is best written through: a terminal's own one, not waiting, when Node
 * opened it afresh; else 2 (a pipe Node made not to wait, or a file, which never waits).
 */
function stderrFd(): number {
  const stream = process.stderr as NodeJS.WriteStream & { _handle?: { fd?: unknown; setBlocking?: (blocking: boolean) => unknown } };
  void stream.writable;
  const handle = stream._handle;
  // Never fd 2 itself: its description is the shell's too, which a terminal left not waiting breaks.
  if (stream.isTTY !== true || handle === undefined || typeof handle.fd !== 'number' || handle.fd < 0 || handle.fd === 2 || typeof handle.setBlocking !== 'function') return 2;
  handle.setBlocking(false);
  return handle.fd;
}
