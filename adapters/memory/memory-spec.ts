/**
 * `--adapter memory`: the memory adapter in the CLI's adapter registry (lib/adapter-registry.ts).
 * Found by the CLI because it is `adapters/<name>/<name>-spec`; nothing else names it.
 */
import type { AdapterRegistration } from '../../lib/adapter-registry';
import { InvalidOptionError } from '../../lib/errors';
import { createMemoryAdapter } from './memory-adapter';

export const storebridgeAdapter: AdapterRegistration = {
  prefix: 'memory',
  describe: 'memory',
  open(spec) {
    if (spec !== 'memory') throw new InvalidOptionError('adapter', 'memory takes no argument (write just "memory")');
    return createMemoryAdapter();
  },
};
