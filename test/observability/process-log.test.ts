import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.ts';
import { logProcessEvents } from '../../src/observability/process-log.ts';

describe("Node's warnings and crashes in the log", () => {
  it('takes warnings over from Node while it runs, and leaves the process as it found it afterwards', async () => {
    let text = '';
    const logger = await createLogger({ level: 'info', destination: new Writable({ write: (chunk, _encoding, done) => void ((text += String(chunk)), done()) }) });
    const warningsBefore = process.listeners('warning');
    const crashesBefore = process.listeners('uncaughtException');
    const restore = logProcessEvents(logger);
    try {
      // Node's printer is off: the log's listener is the only one.
      expect(process.listeners('warning')).toHaveLength(1);
      process.emit('warning', Object.assign(new Error('too many listeners'), { name: 'MaxListenersExceededWarning' }));
    } finally {
      restore();
    }
    expect(JSON.parse(text)).toMatchObject({ level: 40, event: 'node-warning', name: 'MaxListenersExceededWarning', warning: 'too many listeners' });
    expect(process.listeners('warning')).toEqual(warningsBefore);
    expect(process.listeners('uncaughtException')).toEqual(crashesBefore);
  });
});
