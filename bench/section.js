'use strict';
/** Runs one bench section in this process and prints its result as the last stdout line (JSON). */
const name = process.argv[2];
const quick = process.argv.includes('--quick');
require(`./sections/${name}`)
  .run({ quick })
  .then((result) => {
    process.stdout.write(`\n${JSON.stringify(result)}\n`);
    process.exit(0);
  })
  .catch((err) => {
    console.error(`bench section ${name} failed:`, err);
    process.exit(1);
  });
