import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/server.ts';
import { SequentialIds } from '../../src/sim/ids.ts';

/**
 * A sandbox standing for another exchange than the test's first one (an account on another
 * endpoint): its order and deal ids run in a range of their own, as two exchanges' would. Two
 * sandboxes counting from the same start would hand out the same order ids, which the journal
 * (keyed by order id) rightly refuses as two orders under one id.
 */
export function startOtherExchange(options: SandboxOptions): Promise<Sandbox> {
  const ids = new SequentialIds();
  ids.continueFrom({ order: 5_100_000_001, deal: 9_200_000_001, 'counter-order': 4_900_000_001 });
  return startSandbox({ ...options, ids });
}
