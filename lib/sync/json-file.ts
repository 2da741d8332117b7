/**
 * The JSON files the sync side keeps on one machine (the checkpoint file of `storebridge sync
 * --state FILE` and the run reports beside it): read whole, replaced atomically.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';

/** The parsed file, or `undefined` when it does not exist yet. Other read errors and invalid JSON throw. */
export async function readJsonFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return JSON.parse(text);
}

/** Writes `value` to a temporary file beside `file`, then renames it over `file`: a crash mid-write leaves the previous content. */
export async function writeJsonFileAtomically(file: string, value: unknown): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  await fs.writeFile(tmp, JSON.stringify(value, null, 2));
  await fs.rename(tmp, file);
}

/**
 * The named entries of a JSON file holding one object (none when the file does not exist), each
 * checked by `parse` (`undefined`: not valid). Read entry by entry into a prototype-less map: a
 * whole-record parse would assign an entry named `__proto__` instead of keeping it.
 * Throws `Error(invalidMessage)` when the content or any entry is not what `parse` accepts.
 */
export async function readJsonEntries<T>(file: string, parse: (value: unknown) => T | undefined, invalidMessage: string): Promise<Record<string, T>> {
  const content = await readJsonFile(file);
  const all = Object.create(null) as Record<string, T>;
  if (content === undefined) return all;
  if (!content || typeof content !== 'object' || Array.isArray(content)) throw new Error(invalidMessage);
  for (const [name, value] of Object.entries(content)) {
    const entry = parse(value);
    if (entry === undefined) throw new Error(invalidMessage);
    all[name] = entry;
  }
  return all;
}
