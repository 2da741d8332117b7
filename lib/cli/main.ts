/**
 * The `storebridge` command line. Each command lives in `commands/<name>.ts` and exports
 * `run(args: string[], io: CliIO): Promise<number>` (the exit code). Commands are loaded lazily so
 * `storebridge sync` never loads a database driver it does not use.
 */
import { helpPointer } from './flags';
import type { CliIO } from './io';
import { processIO } from './io';

interface CommandModule {
  run(args: string[], io: CliIO): Promise<number>;
}

const COMMANDS: Record<string, { summary: string; load: () => CommandModule }> = {
  serve: { summary: 'serve a store\'s webhooks over an adapter', load: () => require('./commands/serve') },
  demo: { summary: 'start a demo store and show it working', load: () => require('./commands/demo') },
  sync: { summary: 'pull every product and order from a store', load: () => require('./commands/sync') },
  check: { summary: 'check a store\'s endpoints against the interface', load: () => require('./commands/check') },
  'reverse-service': { summary: 'run the service side of the reverse connection', load: () => require('./commands/reverse-service') },
  daemon: { summary: 'run the store\'s reverse-connection daemon', load: () => require('./commands/daemon') },
  openapi: { summary: 'print the OpenAPI 3.1 document', load: () => require('./commands/openapi') },
  dashboard: { summary: 'serve the operator dashboard (sync and reverse connections)', load: () => require('./commands/dashboard') },
  map: { summary: 'mapping files for serve --map: infer one from existing tables, keep row counts', load: () => require('./commands/map') },
  init: { summary: 'create a runnable store app in a new folder', load: () => require('./commands/init') },
};

export function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    'usage: storebridge <command> [options]',
    '',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `storebridge <command> --help` (or `storebridge help <command>`) for a command\'s options.',
  ].join('\n');
}

export async function runCli(argv: string[], io: CliIO): Promise<number> {
  // `storebridge help sync` is `storebridge sync --help`.
  if (argv[0] === 'help' && argv.length > 1) return runCli([argv[1], '--help'], io);
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(usage());
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-v') {
    io.out(require('../../../package.json').version);
    return 0;
  }
  const command = Object.prototype.hasOwnProperty.call(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    io.err(`storebridge: unknown command "${name}"\n${helpPointer()}`);
    return 2;
  }
  let mod: CommandModule;
  try {
    mod = command.load();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') {
      io.err(`storebridge: the "${name}" command is not available in this build`);
      return 2;
    }
    throw err;
  }
  return mod.run(rest, io);
}

/** Entry point of `bin/storebridge.js`. */
export function main(argv: string[]): void {
  runCli(argv, processIO()).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      // Never print a stack with possibly sensitive values: the message only.
      process.stderr.write(`storebridge: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
