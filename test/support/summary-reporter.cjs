// Prints one plain closing line ("tests: N passed, N failed, N skipped") after jest's summary,
// so CI logs can be read without knowing jest's own format.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    process.stdout.write(`tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests} skipped\n`);
  }
}
module.exports = SummaryReporter;
