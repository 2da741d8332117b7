/**
 * `storebridge init DIR [--adapter memory|sqlite|postgres|mysql] [--map FILE] [--storebridge SPEC]`
 *
 * Creates a runnable store app in a new folder (lib/cli/init-templates.ts): `npm install` then
 * `npm test` pass in it. The app depends on storebridge through a copy of this very package, packed
 * into `DIR/vendor/` with `npm pack`: that works before storebridge is on the registry, offline
 * from npm's cache, and pins the app to the version that wrote it. `--storebridge ^0.1.0` depends
 * on the registry instead. docs/init.md explains both.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { defineCommand, runCommand, usageError } from '../flags';
import type { CliIO } from '../io';
import { INIT_ADAPTERS, scaffoldFiles, type InitAdapter } from '../init-templates';

export const command = defineCommand({
  name: 'init',
  usage: 'DIR [--adapter memory|sqlite|postgres|mysql] [--map FILE]',
  summary:
    'Creates a runnable store app in the new folder DIR: an Express app mounting the store router over the adapter (or, with --map, over existing tables), its key from STOREBRIDGE_KEY_FILE or STOREBRIDGE_KEY, a .env.example, a README, and a test running the adapter conformance suite and storebridge check against the app. Then: cd DIR && npm install && npm test.',
  positionals: { name: 'DIR', min: 1, max: 1 },
  flags: {
    adapter: { type: 'string', choices: INIT_ADAPTERS, default: 'sqlite', metavar: 'KIND', help: 'where the app keeps its data: memory | sqlite | postgres | mysql' },
    map: { type: 'string', metavar: 'FILE', help: 'serve existing tables of the --adapter database (sqlite, postgres or mysql) as this mapping file declares (docs/mapping.md); copied into DIR' },
    storebridge: {
      type: 'string',
      metavar: 'SPEC',
      help: 'the storebridge dependency of the app, e.g. ^0.1.0 from the registry (default: a copy of this storebridge, packed into DIR/vendor)',
    },
  },
  epilogue: 'Exit status: 0 when the folder is written; 1 when it cannot be (DIR not empty, npm pack failed); 2 on a usage error.',
});

export const HELP = command.help();

/** The package root of this storebridge (`dist/lib/cli/commands` → the root, in sources and in dist). */
function packageRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json')) || JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name !== 'storebridge') {
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the storebridge package this command runs from');
    dir = up;
  }
  return dir;
}

/** An npm package name made of the folder's name. */
function packageName(dir: string): string {
  const name = basename(resolve(dir)).toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[._-]+/, '').slice(0, 200);
  return name || 'store-app';
}

/** `npm pack` of this storebridge into `vendor`; the tarball's file name. */
function packSelf(vendor: string): string {
  mkdirSync(vendor, { recursive: true });
  // --ignore-scripts: an installed package has no sources to build; its dist/ is what is packed.
  const out = execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', vendor], {
    cwd: packageRoot(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return (JSON.parse(out.slice(out.indexOf('['))) as Array<{ filename: string }>)[0].filename;
}

function isEmptyOrMissing(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0;
}

export function run(args: string[], io: CliIO): Promise<number> {
  return runCommand(command, args, io, async ({ values, positionals }) => {
    const dir = resolve(positionals[0]);
    const adapter = values.adapter as InitAdapter;
    if (values.map !== undefined && adapter === 'memory') return usageError(command, io, '--map needs a database: --adapter sqlite, postgres or mysql');
    if (!isEmptyOrMissing(dir)) {
      io.err(`storebridge init: ${positionals[0]} exists and is not empty: choose a new folder`);
      return 1;
    }
    let map: string | undefined;
    if (values.map !== undefined) {
      const { readMappingFile } = require('../../../adapters/mapped') as typeof import('../../../adapters/mapped');
      try {
        readMappingFile(values.map);
        map = readFileSync(values.map, 'utf8');
      } catch (err) {
        io.err(`storebridge init: ${(err as Error).message}`);
        return 1;
      }
    }
    mkdirSync(dir, { recursive: true });
    let storebridge = values.storebridge;
    let note = `\`package.json\` depends on storebridge ${storebridge} from the npm registry.`;
    if (storebridge === undefined) {
      let tarball: string;
      try {
        tarball = packSelf(join(dir, 'vendor'));
      } catch (err) {
        const detail = String((err as { stderr?: string }).stderr ?? (err as Error).message).trim().split('\n').pop();
        io.err(`storebridge init: npm pack of storebridge failed (${detail}); pass --storebridge ^VERSION to depend on the registry instead`);
        return 1;
      }
      storebridge = `file:vendor/${tarball}`;
      note = [
        `\`package.json\` depends on \`vendor/${tarball}\`, a copy of the storebridge that created this folder`,
        '(made with `npm pack`): `npm install` needs nothing from the registry for storebridge itself, and the',
        'app keeps the version it was written for. Keep the tarball with the app (commit it). To follow',
        'releases from the registry instead, replace it with a version range, e.g. `"storebridge": "^0.1.0"`,',
        'and delete `vendor/`.',
      ].join('\n');
    }
    const files = scaffoldFiles({ name: packageName(dir), adapter, mapped: map !== undefined, storebridge, storebridgeNote: note });
    if (map !== undefined) files['storebridge-map.json'] = map;
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const near = relative(process.cwd(), dir);
    const shown = near === '' ? '.' : near.startsWith('..') ? dir : near;
    io.out(`created ${shown}: a store app over ${map !== undefined ? `the tables storebridge-map.json maps (${adapter})` : adapter}`);
    io.out(`next: cd ${shown} && npm install && npm test   (then copy .env.example to .env, set the key, and npm start)`);
    return 0;
  });
}
