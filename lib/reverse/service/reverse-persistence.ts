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
 * The records of a transaction are deleted when it ends. Every call's changes go in one atomic batch,
 * with the state record, guarded by the state record as the call read it (`writeIf`): services
 * sharing the store serve the same connections (docs/deployment.md "Replicas").
 */
import type { Entity } from '../../contract/entities';
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

/** A connection as loaded: its machine, and the state record it was read from (the guard of its next write). */
export interface LoadedConnection {
  readonly machine: ReverseConnectionMachine;
  sample: SampleRecord | null;
  /** The state record exactly as stored (`null`: none yet). A write is applied only while the store still holds it. */
  stored: string | null;
  /** The state's revision in the store (0: none yet); every write stores the next one, so no two writes store the same text. */
  rev: number;
  /** The state's signature as last stored (to skip writing an unchanged state). */
  saved: string;
}

/** The failure records and id-map log the status view shows. */
export interface ConnectionRecords {
  readonly failures: FailureRecord[];
  readonly mappings: IdMapping[];
}

const CHUNK = 5000;
/** A state whose only change is `touchedAt` is written at most this often (ms): the expiry clock may lose that much on a crash. */
const TOUCH_RESOLUTION_MS = 10_000;

const chunks = (n: number) => Math.ceil(n / CHUNK);

export class ConnectionPersistence {
  private readonly prefix: string;
  /** The running transaction's records read so far (written once, never changed: safe to keep). */
  private readonly records = new Map<string, string[]>();
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

  /**
   * The connection as the store holds it now: one read of the state record (and the sample), and
   * `cached` reused when the record is the one it was read from. Otherwise another service over the
   * same store (a replica) changed it: the machine is rebuilt from the record, and the running
   * transaction's item lists and received pages are read (only those not read before: they are
   * written once and never changed, so a kept copy stays right).
   */
  async fresh(machineConfig: Partial<MachineConfig>, cached?: LoadedConnection, shared = true): Promise<LoadedConnection> {
    // One process only (`stateShared: false`): what is in memory is what is stored.
    if (cached && !shared) return cached;
    const head = await this.store.read([this.key('state'), this.key('sample')]);
    const stateText = head.get(this.key('state')) ?? null;
    if (cached && cached.stored === stateText) return cached;
    const sampleText = head.get(this.key('sample'));
    const sample = sampleText ? (JSON.parse(sampleText) as SampleRecord) : null;
    if (stateText === null) {
      this.records.clear();
      const machine = new ReverseConnectionMachine(machineConfig);
      return { machine, sample, stored: null, rev: 0, saved: this.signature(machine.state) };
    }
    const state = parseState(stateText) as MachineState & { rev?: number };
    const rev = typeof state.rev === 'number' ? state.rev : 0;
    delete state.rev;
    const keys = this.transactionKeys(state);
    const missing = keys.filter((k) => !this.records.has(k));
    if (missing.length > 0) {
      const rows = await this.store.read(missing);
      for (const k of missing) {
        const text = rows.get(k);
        if (text === undefined) throw new Error(`the reverse-connection state is incomplete: record ${k.slice(this.prefix.length)} is missing`);
        this.records.set(k, JSON.parse(text) as string[]);
      }
    }
    const wanted = new Set(keys);
    for (const k of this.records.keys()) if (!wanted.has(k)) this.records.delete(k);
    const machine = new ReverseConnectionMachine(machineConfig, state, this.transactionRecords(state));
    return { machine, sample, stored: stateText, rev, saved: this.signature(state) };
  }

  /** The failure records and id-map log of the state `loaded` holds (the status view; not needed by daemon calls). */
  async recordsOf(loaded: LoadedConnection): Promise<ConnectionRecords> {
    const state = loaded.machine.state;
    const failureKeys = this.recordKeys('failure', state.failureSeq, this.config.keepFailures);
    const mapKeys = this.recordKeys('map', state.mappingSeq, this.config.keepMappings);
    const rows = await this.store.read([...failureKeys, ...mapKeys]);
    const records = <T>(keys: string[]): T[] => keys.flatMap((k) => (rows.has(k) ? [JSON.parse(rows.get(k)!) as T] : []));
    return { failures: records<FailureRecord>(failureKeys), mappings: records<IdMapping>(mapKeys) };
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

  private transactionRecords(state: MachineState) {
    const c = state.current;
    if (!c) return {};
    const keys = this.transactionKeys(state);
    const read = (key: string): string[] => this.records.get(key)!;
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
   * Writes what changed since the last save in one atomic batch, with the state record and its
   * next revision, guarded by the record as read (`writeIf`): resolves `false`, writing nothing,
   * when another service changed the connection since (the caller reads it again and repeats its
   * call). Nothing is written when nothing changed. Throws when the store fails: reload then.
   */
  async save(loaded: LoadedConnection, extra: readonly StateChange[] = []): Promise<boolean> {
    const { state, effects } = loaded.machine.drain();
    const changes: StateChange[] = effects.flatMap((e) => this.effectChanges(e));
    const signature = this.signature(state);
    changes.push(...extra);
    if (changes.length === 0 && signature === loaded.saved) return true;
    const rev = loaded.rev + 1;
    const text = JSON.stringify({ ...state, rev });
    changes.push({ key: this.key('state'), value: text });
    const guard = { key: this.key('state'), expected: loaded.stored };
    if (this.store.writeIf) {
      if (!(await this.store.writeIf(guard, changes))) return false;
    } else {
      await this.store.write(changes);
    }
    loaded.stored = text;
    loaded.rev = rev;
    loaded.saved = signature;
    return true;
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

