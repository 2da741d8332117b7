/**
 * The `sync` progress bar (drawn on stderr when it is a terminal): one line per entity, each left
 * with its last numbers.
 */
import { progressBar } from '../../lib/cli/commands/sync';
import type { SyncEvent } from '../../lib/sync/sync-run';

const page = (entity: 'products' | 'orders', seen: number, itemsTotal: number, totalKnown?: boolean): SyncEvent => ({ type: 'page', entity, seen, itemsTotal, totalKnown, written: seen, position: undefined });

/** What a terminal shows for the written text: `\r` returns to the line start and overwrites it. */
function screen(text: string): string[] {
  const lines: string[] = [];
  for (const raw of text.split('\n')) lines.push(raw.split('\r').reduce((line, part) => part + line.slice(part.length), ''));
  return lines.map((l) => l.trimEnd()).filter((l) => l !== '');
}

test('the products bar stays on screen, at its end, when the orders bar starts', () => {
  let out = '';
  const bar = progressBar((s) => (out += s));
  for (let seen = 100; seen <= 5000; seen += 100) bar.update(page('products', seen, 5000));
  for (let seen = 100; seen <= 1200; seen += 100) bar.update(page('orders', seen, 1250));
  bar.update(page('orders', 1250, 1250));
  bar.done();
  expect(screen(out)).toEqual([`products [${'#'.repeat(30)}] 5000/5000`, `orders   [${'#'.repeat(30)}] 1250/1250`]);
  expect(out.endsWith('\n')).toBe(true);
});

test('an entity that stops short of itemsTotal (incremental) still shows its last numbers, though throttled', () => {
  let out = '';
  const bar = progressBar((s) => (out += s));
  bar.update(page('products', 100, 5000));
  bar.update(page('products', 200, 5000)); // within 100 ms of the first: not drawn yet
  bar.update(page('orders', 100, 1250));
  bar.update(page('orders', 150, 1250));
  bar.done();
  const lines = screen(out);
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/^products \[#-+\] 200\/5000$/);
  expect(lines[1]).toMatch(/^orders {3}\[#+-+\] 150\/1250$/);
});

test('no output at all when no page came', () => {
  let out = '';
  const bar = progressBar((s) => (out += s));
  bar.done();
  expect(out).toBe('');
});

test('an unknown itemsTotal (a placeholder, or php-mysql\'s count row) is shown as "?", never as a total of 0', () => {
  let out = '';
  const bar = progressBar((s) => (out += s));
  bar.update(page('products', 50, 0, false));
  bar.update(page('products', 310, 0, false));
  bar.done();
  expect(screen(out)).toEqual([`products [${'-'.repeat(30)}] 310/?`]);
});
