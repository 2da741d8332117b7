'use strict';
/** Runs one bench section in this process and prints its result as the last stdout line (JSON). */
const name = process.argv[2];
const quick = process.argv.includes('--quick');
// `--NAME=VALUE` options (e.g. `--fleet-connections=1000`), for the sections that take any.
const args = {};
for (const a of process.argv.slice(3)) {
  const m = /^--([a-z-]+)=(.*)$/.exec(a);
  if (m) args[m[1]] = m[2];
}
require(`./sections/${name}`)
  .run({ quick, args })
  .then((result) => {
    process.stdout.write(`\n${JSON.stringify(result)}\n`);
    process.exit(0);
  })
  .catch((err) => {
    console.error(`bench section ${name} failed:`, err);
    process.exit(1);
  });
