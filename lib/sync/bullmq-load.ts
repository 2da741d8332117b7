/**
 * Internal: bullmq, loaded on first use (importing storebridge never requires it). Not exported from
 * `storebridge/sync`, so the public declarations never import bullmq types.
 */
export function loadBullmq(): typeof import('bullmq') {
  try {
    return require('bullmq') as typeof import('bullmq');
  } catch (err) {
    throw new Error('the BullMQ sync scheduler needs the bullmq and ioredis packages: npm install bullmq ioredis', { cause: err });
  }
}
