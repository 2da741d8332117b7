import { IntervalScheduler } from '../../lib/sync';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('runs at start and on every interval tick', async () => {
  const starts: number[] = [];
  const s = new IntervalScheduler({ intervalMs: 1000, task: async () => void starts.push(Date.now()) });
  const t0 = Date.now();
  s.start();
  await jest.advanceTimersByTimeAsync(3500);
  expect(starts.map((t) => t - t0)).toEqual([0, 1000, 2000, 3000]);
  await s.stop();
  await jest.advanceTimersByTimeAsync(5000);
  expect(starts).toHaveLength(4);
});

test('never overlaps: ticks during a run are skipped, the schedule goes on after it', async () => {
  const runs: Array<ReturnType<typeof deferred>> = [];
  let concurrent = 0;
  let maxConcurrent = 0;
  const s = new IntervalScheduler({
    intervalMs: 1000,
    task: async () => {
      const d = deferred();
      runs.push(d);
      maxConcurrent = Math.max(maxConcurrent, ++concurrent);
      await d.promise;
      concurrent--;
    },
  });
  s.start();
  await jest.advanceTimersByTimeAsync(3500); // ticks at 1000, 2000, 3000 come while run 1 is going
  expect(runs).toHaveLength(1);
  expect(s.skipped).toBe(3);
  runs[0].resolve();
  await jest.advanceTimersByTimeAsync(500); // tick at 4000 starts run 2
  expect(runs).toHaveLength(2);
  expect(maxConcurrent).toBe(1);
  const stopped = s.stop();
  let done = false;
  void stopped.then(() => (done = true));
  await jest.advanceTimersByTimeAsync(0);
  expect(done).toBe(false); // stop waits for the run in progress
  runs[1].resolve();
  await stopped;
  await jest.advanceTimersByTimeAsync(10_000);
  expect(runs).toHaveLength(2);
});

test('a failing run is reported and the schedule goes on', async () => {
  const errors: unknown[] = [];
  let n = 0;
  const s = new IntervalScheduler({ intervalMs: 100, runImmediately: false, task: async () => { if (++n === 1) throw new Error('boom'); }, onError: (e) => errors.push(e) });
  s.start();
  await jest.advanceTimersByTimeAsync(250);
  expect(n).toBe(2);
  expect(errors).toHaveLength(1);
  await s.stop();
});

test('intervalMs is checked', () => {
  expect(() => new IntervalScheduler({ intervalMs: 0, task: async () => undefined })).toThrow(/intervalMs/);
});
