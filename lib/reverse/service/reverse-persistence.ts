/**
 * One connection's state in a `ReverseStateStore`: how the machine's state and its effects become
 * keys, and how a restarted service reads them back into the same machine.
 *
 * Keys (`N` is the connection's name, URI-encoded, so that no name can reach another's keys):
 * - `N:state`: the machine's state (small JSON), rewritten when it changes;
 * - `N:items:<tx>:<entity>:<chunk>`: the item ids of a pull, 5,000 per record, written once;
 * - `N:rx:<tx>:<entity>:<page>`: the ids new to a push in each page, written once;
 * - `N:failure:<seq>`, `N:map:<seq>`: failure records and the log of id mappings (the status view's
 *   `idMap`), the last `keep…` of each;
 * - `N:sample`: the last sample push's first items;
 * - `N:id:…`, `N:buyer:…`: the id map itself, one record per link, never trimmed (`reverse-identity.ts`).
 * The records of a transaction are deleted when it ends. Every call's changes go in one atomic batch.
 */
import type { Entity } from '../../contract/webhook';
import {
  ReverseConnectionMachine,
  parseState,
  type FailureRecord,
  type IdMapping,
  type MachineConfig,
  type MachineEffect,
  type MachineState,
} from './reverse-machine';
import { ConnectionIdentity } from './reverse-identity';
import type { ReverseStateStore, StateChange } from './reverse-state-store';
import { ENTITIES } from '../../contract/entities';

/** The last sample push received, kept for inspection (never written to the store). */
export interface SampleRecord extends Readonly<Record<Entity, unknown[]>> {
  readonly transaction: number;
  readonly at: number;
}

export interface PersistenceConfig {
  /** Failure records kept (older ones are deleted). */
  readonly keepFailures: number;
  /** Id mappings kept in the log the status view shows (the id map keeps every link). */
  readonly keepMappings: number;
}

/** A connection as loaded: its machine and the records the status view shows. */
export interface LoadedConnection {
  readonly machine: ReverseConnectionMachine;
  readonly failures: FailureRecord[];
  readonly mappings: IdMapping[];
  sample: SampleRecord | null;
  /** The state as last written (to skip writing an unchanged state). */
  saved: string;
}

const CHUNK = 5000;
/** A state whose only change is `touchedAt` is written at most this often (ms): the expiry clock may lose that much on a crash. */
const TOUCH_RESOLUTION_MS = 10_000;

const chunks = (n: number) => Math.ceil(n / CHUNK);

export class ConnectionPersistence {
  private readonly prefix: string;
  /** The connection's id map, in the same store under the same prefix (never trimmed). */
  readonly identity: ConnectionIdentity;

  constructor(
    private readonly store: ReverseStateStore,
    name: string,
    private readonly config: PersistenceConfig,
  ) {
    this.prefix = `${encodeURIComponent(name)}:`;
    this.identity = new ConnectionIdentity(store, this.prefix);
  }

  private key(...parts: Array<string | number>): string {
    return this.prefix + parts.join(':');
  }

  /** Reads the connection back (a fresh one when the store has nothing for it). */
  async load(machineConfig: Partial<MachineConfig>): Promise<LoadedConnection> {
    const head = await this.store.read([this.key('state'), this.key('sample')]);
    const stateText = head.get(this.key('state'));
    const sampleText = head.get(this.key('sample'));
    const sample = sampleText ? (JSON.parse(sampleText) as SampleRecord) : null;
    if (stateText === undefined) {
      const machine = new ReverseConnectionMachine(machineConfig);
      return { machine, failures: [], mappings: [], sample, saved: this.signature(machine.drain().state) };
    }
    const state = parseState(stateText);
    const keys = [...this.recordKeys('failure', state.failureSeq, this.config.keepFailures), ...this.recordKeys('map', state.mappingSeq, this.config.keepMappings), ...this.transactionKeys(state)];
    const rows = await this.store.read(keys);
    const records = <T>(kind: string, seq: number, keep: number): T[] =>
      this.recordKeys(kind, seq, keep).flatMap((k) => (rows.has(k) ? [JSON.parse(rows.get(k)!) as T] : []));
    const machine = new ReverseConnectionMachine(machineConfig, state, this.transactionRecords(state, rows));
    return {
      machine,
      failures: records<FailureRecord>('failure', state.failureSeq, this.config.keepFailures),
      mappings: records<IdMapping>('map', state.mappingSeq, this.config.keepMappings),
      sample,
      saved: this.signature(state),
    };
  }

  private recordKeys(kind: string, seq: number, keep: number): string[] {
    const out: string[] = [];
    for (let s = Math.max(1, seq - keep + 1); s <= seq; s++) out.push(this.key(kind, s));
    return out;
  }

  /** The records of the running transaction. */
  private transactionKeys(state: MachineState): string[] {
    const c = state.current;
    if (!c) return [];
    if (c.kind === 'pull') {
      const entity = c.entities[c.index];
      return Array.from({ length: chunks(c.total) }, (_, i) => this.key('items', c.transaction, entity, i));
    }
    return ENTITIES.flatMap((e) => Array.from({ length: c.pages[e] }, (_, i) => this.key('rx', c.transaction, e, i + 1)));
  }

  private transactionRecords(state: MachineState, rows: ReadonlyMap<string, string>) {
    const c = state.current;
    const read = (key: string): string[] => {
      const text = rows.get(key);
      if (text === undefined) throw new Error(`the reverse-connection state is incomplete: record ${key.slice(this.prefix.length)} is missing`);
      return JSON.parse(text) as string[];
    };
    if (!c) return {};
    const keys = this.transactionKeys(state);
    if (c.kind === 'pull') return { pullIds: keys.flatMap(read) };
    const received: Partial<Record<Entity, string[]>> = {};
    for (const e of ENTITIES) received[e] = keys.filter((k) => k.startsWith(this.key('rx', c.transaction, e, ''))).flatMap(read);
    return { received };
  }

  /** The state as compared between writes: `touchedAt` at `TOUCH_RESOLUTION_MS`. */
  private signature(state: MachineState): string {
    const c = state.current;
    if (!c) return JSON.stringify(state);
    return JSON.stringify({ ...state, current: { ...c, touchedAt: Math.floor(c.touchedAt / TOUCH_RESOLUTION_MS) } });
  }

  /**
   * Writes what changed since the last save (one atomic batch; nothing when nothing changed) and
   * updates the loaded connection's records. Throws when the store fails: reload the connection then.
   */
  async save(loaded: LoadedConnection, extra: readonly StateChange[] = []): Promise<void> {
    const { state, effects } = loaded.machine.drain();
    const changes: StateChange[] = effects.flatMap((e) => this.effectChanges(e));
    const signature = this.signature(state);
    if (signature !== loaded.saved) changes.push({ key: this.key('state'), value: JSON.stringify(state) });
    changes.push(...extra);
    if (changes.length > 0) await this.store.write(changes);
    loaded.saved = signature;
    for (const e of effects) {
      if (e.type === 'failure') keepLast(loaded.failures, e.record, this.config.keepFailures);
      else if (e.type === 'mapping') keepLast(loaded.mappings, e.record, this.config.keepMappings);
    }
  }

  /** The change that stores the last sample push. */
  sampleChange(sample: SampleRecord): StateChange {
    return { key: this.key('sample'), value: JSON.stringify(sample) };
  }

  private effectChanges(e: MachineEffect): StateChange[] {
    switch (e.type) {
      case 'pull-items': {
        const out: StateChange[] = [];
        for (let i = 0; i * CHUNK < e.ids.length; i++) out.push({ key: this.key('items', e.transaction, e.entity, i), value: JSON.stringify(e.ids.slice(i * CHUNK, (i + 1) * CHUNK)) });
        return out;
      }
      case 'received':
        return [{ key: this.key('rx', e.transaction, e.entity, e.page), value: JSON.stringify(e.ids) }];
      case 'failure':
        return this.recordChanges('failure', e.seq, e.record, this.config.keepFailures);
      case 'mapping':
        return this.recordChanges('map', e.seq, e.record, this.config.keepMappings);
      case 'ended': {
        const out: StateChange[] = [];
        for (const entity of ENTITIES) {
          for (let i = 0; i < chunks(e.listed[entity] ?? 0); i++) out.push({ key: this.key('items', e.transaction, entity, i), value: null });
          for (let p = 1; p <= (e.pages[entity] ?? 0); p++) out.push({ key: this.key('rx', e.transaction, entity, p), value: null });
        }
        return out;
      }
    }
  }

  private recordChanges(kind: string, seq: number, record: unknown, keep: number): StateChange[] {
    const out: StateChange[] = [{ key: this.key(kind, seq), value: JSON.stringify(record) }];
    if (seq - keep >= 1) out.push({ key: this.key(kind, seq - keep), value: null });
    return out;
  }
}

function keepLast<T>(list: T[], item: T, keep: number): void {
  list.push(item);
  if (list.length > keep) list.splice(0, list.length - keep);
}
