/**
 * `storebridge map infer --adapter SPEC --products-table T [--orders-table T]` prints a mapping file
 * guessed from the tables' columns; `storebridge map counts --adapter SPEC --map FILE [--apply]`
 * prints (or runs) the triggers that keep exact row counts of the mapped tables;
 * `storebridge map schema` prints the mapping file's JSON Schema.
 * The mapped adapter (docs/mapping.md) is loaded only here, not when the CLI starts.
 */
import { StorebridgeError } from '../../errors';
import { defineCommand, runCommand, usageError } from '../flags';
import type { Kysely } from 'kysely';
import type { SqlKind } from '../../../adapters/sql/sql-dialects';
import type { CliIO } from '../io';
import { ENTITIES } from '../../contract/entities';

type Mapped = typeof import('../../../adapters/mapped');
type Infer = typeof import('../../../adapters/mapped/mapping-infer');

// eslint-disable-next-line @typescript-eslint/no-require-imports
const mapped = (): Mapped => require('../../../adapters/mapped');

export const inferCommand = defineCommand({
  name: 'map infer',
  usage: '--adapter SPEC --products-table T [--orders-table T] > storebridge-map.json',
  summary:
    'Prints a mapping file (docs/mapping.md) guessed from the columns of an existing products table (and orders table): the id, the update-time column and its type, sku, name/title, price, stock, currency, status, total, … Every guess carries a "review" note. Serve it with storebridge serve --adapter SPEC --map FILE. Writes stay off until you map them.',
  flags: {
    adapter: { type: 'string', required: true, metavar: 'SPEC', help: 'the database: sqlite:FILE, postgres:URL or mysql:URL' },
    'products-table': { type: 'string', required: true, metavar: 'T', help: 'the products table (or view); schema.table on PostgreSQL' },
    'orders-table': { type: 'string', metavar: 'T', help: 'the orders table (or view)' },
  },
  epilogue: 'Exit status: 0 with the file on stdout; 1 when a table is missing or has no id or update-time column; 2 on a usage error.',
});

export const countsCommand = defineCommand({
  name: 'map counts',
  usage: '--adapter SPEC --map FILE [--apply]',
  summary:
    "Prints the statements that make the database keep an exact row count of each mapped table (a row in storebridge_row_counts moved by insert and delete triggers), so itemsTotal is one key read instead of a count(*) (docs/mapping.md \"itemsTotal\"); with --apply, runs them. Tables that have it already are named, not changed.",
  flags: {
    adapter: { type: 'string', required: true, metavar: 'SPEC', help: 'the database: sqlite:FILE, postgres:URL or mysql:URL' },
    map: { type: 'string', required: true, metavar: 'FILE', help: 'the mapping file whose tables to count' },
    apply: { type: 'boolean', help: 'run the statements (each table at once, locked against writes while it is counted)' },
  },
  epilogue: 'TRUNCATE fires no trigger: after one, run this again. Exit status: 0; 1 when the file or the database cannot be read or a statement fails; 2 on a usage error.',
});

export const schemaCommand = defineCommand({
  name: 'map schema',
  usage: '> mapping.schema.json',
  summary: "Prints the mapping file's JSON Schema (the same as docs/mapping.schema.json in the package), for editors and validators.",
  flags: {},
});

const SUBCOMMANDS: Record<string, { summary: string; run: (args: string[], io: CliIO) => Promise<number> }> = {
  infer: { summary: 'print a mapping file inferred from existing tables', run: runInfer },
  counts: { summary: 'print (or --apply) the triggers that keep exact row counts of the mapped tables', run: runCounts },
  schema: { summary: "print the mapping file's JSON Schema", run: runSchema },
};

export const command = defineCommand({
  name: 'map',
  usage: '<infer|counts|schema> [options]',
  summary: 'The mapping file says which existing tables and columns hold the products and orders served by storebridge serve --map FILE (docs/mapping.md).',
  flags: {},
  positionals: { name: 'SUBCOMMAND', min: 1, max: 1 },
  epilogue: [
    'subcommands:',
    ...Object.entries(SUBCOMMANDS).map(([name, c]) => `  ${name.padEnd(8)}${c.summary}`),
    '',
    'Run `storebridge map <subcommand> --help` for its options.',
  ].join('\n'),
});

export const HELP = command.help();

/**
 * Opens the database a subcommand works on, runs `work` on it and closes it. Any failure is one
 * line: the kit's own errors say what is wrong; a driver's error is about the connection (its
 * password never shown).
 */
async function onDatabase(name: string, spec: string, io: CliIO, work: (db: Kysely<any>, kind: SqlKind) => Promise<void>): Promise<number> {
  const { connectExisting } = require('../../../adapters/mapped/mapped-adapter') as typeof import('../../../adapters/mapped/mapped-adapter');
  let opened: ReturnType<typeof connectExisting> | undefined;
  try {
    opened = connectExisting(spec);
    await work(opened.db, opened.kind);
    return 0;
  } catch (err) {
    const { SqlConnectError } = require('../../../adapters/sql/sql-adapter') as typeof import('../../../adapters/sql/sql-adapter');
    io.err(`storebridge ${name}: ${err instanceof StorebridgeError ? err.message : new SqlConnectError(spec, err).message}`);
    return 1;
  } finally {
    await opened?.db.destroy();
  }
}

function runInfer(args: string[], io: CliIO): Promise<number> {
  return runCommand(inferCommand, args, io, async ({ values }) => {
    const { inferMapping } = require('../../../adapters/mapped/mapping-infer') as Infer;
    return onDatabase('map infer', values.adapter, io, async (db, kind) => {
      const mapping = await inferMapping(db, kind, { productsTable: values.productsTable, ordersTable: values.ordersTable });
      io.out(JSON.stringify(mapping, null, 2));
    });
  });
}

function runCounts(args: string[], io: CliIO): Promise<number> {
  return runCommand(countsCommand, args, io, async ({ values }) => {
    const counts = require('../../../adapters/mapped/mapped-counts') as typeof import('../../../adapters/mapped/mapped-counts');
    let tables: string[];
    try {
      const mapping = mapped().readMappingFile(values.map);
      tables = ENTITIES.flatMap((e) => (mapping[e] ? [mapping[e]!.table] : []));
    } catch (err) {
      io.err(`storebridge map counts: ${(err as Error).message}`);
      return 1;
    }
    return onDatabase('map counts', values.adapter, io, async (db, kind) => {
      for (const table of tables) {
        if (await counts.countsInstalled(db, kind, table)) {
          io.out(`-- ${table}: its count is kept already`);
        } else if (values.apply) {
          await counts.installCounts(db, kind, table);
          io.out(`-- ${table}: its count is kept from now on`);
        } else {
          io.out(`-- ${table}\n${counts.countsScript(db, kind, table)}`);
        }
      }
    });
  });
}

function runSchema(args: string[], io: CliIO): Promise<number> {
  return runCommand(schemaCommand, args, io, async () => {
    io.out(JSON.stringify(mapped().mappingJsonSchema(), null, 2));
    return 0;
  });
}

export async function run(args: string[], io: CliIO): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h') {
    io.out(HELP);
    return 0;
  }
  if (sub === undefined) return usageError(command, io, 'expected a subcommand: infer, counts or schema');
  if (sub.startsWith('-')) return usageError(command, io, `Unknown option '${sub}'`);
  const found = Object.prototype.hasOwnProperty.call(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined;
  if (!found) return usageError(command, io, `unknown subcommand "${sub}": expected infer, counts or schema`);
  return found.run(rest, io);
}
