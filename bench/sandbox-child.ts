// A sandbox in its own process, so the client's CPU can be measured without the server's.
import { startSandbox } from '../src/sandbox/server.ts';

const sandbox = await startSandbox({ rateLimits: false });
process.stdout.write(`${JSON.stringify({ url: sandbox.url, apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret })}\n`);
const stop = (): void => {
  void sandbox.stop().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
