// The fault suite's results table, printed once at the end of `npm run faults` (a jest reporter).
// The test files append their rows, already rendered (fault-kit.ts `record`), to the file named by
// STOREBRIDGE_FAULTS_OUT, which this reporter creates before the tests start.
const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

class FaultTableReporter {
  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'storebridge-faults-table-'));
    process.env.STOREBRIDGE_FAULTS_OUT = join(this.dir, 'rows.md');
  }

  onRunComplete() {
    let rows = '';
    try {
      rows = readFileSync(process.env.STOREBRIDGE_FAULTS_OUT, 'utf8');
    } catch {
      // no row recorded
    }
    rmSync(this.dir, { recursive: true, force: true });
    if (rows) process.stdout.write(`\nFault suite results (docs/reliability.md):\n\n${rows}\n`);
  }
}

module.exports = FaultTableReporter;
