/** The adapter registry: shapes are checked, prefixes are unique, specs find their registration. */
import { createMemoryAdapter } from '../../adapters/memory';
import { findAdapterSpec, registerAdapterSpec, registeredAdapterSpecs, specPrefix, type AdapterRegistration } from '../../lib/adapter-registry';
import { InvalidOptionError } from '../../lib/errors';

const shelf: AdapterRegistration = { prefix: ['shelf', 'shelf+tls'], describe: 'shelf:NAME', open: () => createMemoryAdapter() };

test('a registration answers its prefixes, alone or followed by ":"', () => {
  registerAdapterSpec(shelf);
  registerAdapterSpec(shelf); // the same object again: a no-op
  expect(registeredAdapterSpecs().filter((r) => r === shelf)).toHaveLength(1);
  expect(findAdapterSpec('shelf')).toBe(shelf);
  expect(findAdapterSpec('shelf:a:b')).toBe(shelf);
  expect(findAdapterSpec('shelf+tls://host/x')).toBe(shelf);
  expect(findAdapterSpec('shelves:x')).toBeUndefined();
  expect(findAdapterSpec('shel')).toBeUndefined();
  expect(specPrefix('postgres://u:p@h/db')).toBe('postgres');
  expect(specPrefix('memory')).toBe('memory');
});

test('a prefix is claimed once', () => {
  const other: AdapterRegistration = { prefix: 'shelf', describe: 'another shelf', open: () => createMemoryAdapter() };
  expect(() => registerAdapterSpec(other)).toThrow(InvalidOptionError);
  expect(() => registerAdapterSpec(other)).toThrow(/the spec prefix "shelf" is already registered \(by "shelf:NAME"\)/);
  expect(findAdapterSpec('shelf:x')).toBe(shelf);
});

test.each([
  [{ prefix: 'Bad', describe: 'x', open: () => createMemoryAdapter() }, /prefix must be/],
  [{ prefix: [], describe: 'x', open: () => createMemoryAdapter() }, /prefix must be/],
  [{ prefix: 'a:b', describe: 'x', open: () => createMemoryAdapter() }, /prefix must be/],
  [{ prefix: 'ok', describe: '', open: () => createMemoryAdapter() }, /describe must be/],
  [{ prefix: 'ok', describe: 'ok' }, /open must be a function/],
  [undefined, /does not export an adapter registration/],
])('a malformed registration is refused: %p', (registration, message) => {
  expect(() => registerAdapterSpec(registration as never)).toThrow(message);
  expect(findAdapterSpec('ok')).toBeUndefined();
});
