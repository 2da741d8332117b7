/**
 * A better-sqlite3 "prebuilt binary" for `npm install` in throwaway projects: the native module
 * this checkout already built, packed the way prebuild-install downloads one. Pointing
 * `npm_config_better_sqlite3_local_prebuilds` at it makes an install take the path a machine with
 * internet access takes (a prebuilt download) instead of compiling SQLite for minutes, which only
 * the npm registry being reachable here would otherwise force.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const NODE_MODULES = join(__dirname, '..', '..', 'node_modules');

/** Writes the prebuild into `dir`; returns `dir` (the value for npm_config_better_sqlite3_local_prebuilds). */
export function localSqlitePrebuild(dir: string): string {
  const stage = join(dir, 'stage', 'build', 'Release');
  mkdirSync(stage, { recursive: true });
  copyFileSync(join(NODE_MODULES, 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'), join(stage, 'better_sqlite3.node'));
  const { version } = JSON.parse(readFileSync(join(NODE_MODULES, 'better-sqlite3', 'package.json'), 'utf8')) as { version: string };
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', ['-czf', join(dir, name), '-C', join(dir, 'stage'), 'build']);
  return dir;
}
