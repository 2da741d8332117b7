/**
 * A jest reporter that ends every run with the suites and tests it skipped, and why (issue 21: a
 * suite skipped for lack of Chromium used to pass unnoticed in a 159-line log). `describeWhen`
 * (test/support/describe-when.ts) writes one note per skipped suite into the directory this reporter
 * names in STOREBRIDGE_SKIP_NOTES (set before the test workers start, so they inherit it); tests
 * skipped another way (`it.skip`) are listed by name, as skipped without a recorded reason.
 */
'use strict';
const { mkdtempSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');

class SkipReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    // Tests left out by `-t PATTERN` are not skipped: jest matches names the same way.
    this.selected = globalConfig.testNamePattern ? new RegExp(globalConfig.testNamePattern, 'i') : undefined;
    this.dir = mkdtempSync(path.join(tmpdir(), 'storebridge-skips-'));
    process.env.STOREBRIDGE_SKIP_NOTES = this.dir;
  }

  /** The notes describeWhen wrote: `{file, name, reason}` each. */
  notes() {
    return readdirSync(this.dir).map((f) => JSON.parse(readFileSync(path.join(this.dir, f), 'utf8')));
  }

  onRunComplete(_contexts, results) {
    const notes = this.notes();
    rmSync(this.dir, { recursive: true, force: true });
    const relative = (file) => path.relative(this.rootDir, file);
    const lines = [];
    for (const file of [...results.testResults].sort((a, b) => a.testFilePath.localeCompare(b.testFilePath))) {
      const mine = notes.filter((n) => n.file === file.testFilePath);
      for (const n of mine) {
        const tests = file.testResults.filter((t) => t.status === 'pending' && t.ancestorTitles.includes(n.name)).length;
        lines.push(`  ${relative(file.testFilePath)} › ${n.name} (${tests} test${tests === 1 ? '' : 's'}): ${n.reason}`);
      }
      const unexplained = file.testResults.filter((t) => t.status === 'pending' && !mine.some((n) => t.ancestorTitles.includes(n.name)) && (!this.selected || this.selected.test(t.fullName)));
      for (const t of unexplained) lines.push(`  ${relative(file.testFilePath)} › ${[...t.ancestorTitles, t.title].join(' › ')}: skipped in the test file (no reason recorded)`);
    }
    // A note from a file jest did not report (a suite that failed to load) still says what was skipped.
    for (const n of notes.filter((n) => !results.testResults.some((f) => f.testFilePath === n.file))) lines.push(`  ${n.file ? relative(n.file) : '?'} › ${n.name}: ${n.reason}`);
    const filtered = this.selected ? ' (tests left out by -t are not counted)' : '';
    const text =
      lines.length === 0
        ? `Skipped: nothing${filtered}.\n`
        : `Skipped (${results.numPendingTests} test${results.numPendingTests === 1 ? '' : 's'}):\n${lines.join('\n')}\nSTOREBRIDGE_REQUIRE_DB=1 turns a skipped database, Redis or browser suite into a failure.\n`;
    // Jest's summary reporter always runs after custom reporters; this goes below it, last.
    process.once('exit', () => process.stderr.write(text));
  }
}

module.exports = SkipReporter;
