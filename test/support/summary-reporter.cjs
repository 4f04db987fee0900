// Prints plain closing lines after jest's summary, so CI logs can be read without knowing
// jest's own format: the counts ("tests: N passed, N failed, N skipped") and, per layer (jest
// project), its files and the sum of their run times (with two workers the wall time is about
// half the sum).
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const layers = new Map();
    for (const file of results.testResults) {
      const name = typeof file.displayName === 'string' ? file.displayName : (file.displayName?.name ?? 'tests');
      const layer = layers.get(name) ?? { files: 0, ms: 0 };
      layer.files += 1;
      layer.ms += Math.max(0, (file.perfStats?.end ?? 0) - (file.perfStats?.start ?? 0));
      layers.set(name, layer);
    }
    const wallS = Math.round((Date.now() - results.startTime) / 1000);
    const byLayer = [...layers].map(([name, l]) => `${name} ${l.files} files ${Math.round(l.ms / 1000)} s`).join(', ');
    process.stdout.write(`tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests} skipped\n`);
    if (layers.size > 0) process.stdout.write(`time: ${wallS} s wall; by layer (sum of file times): ${byLayer}\n`);
  }
}
module.exports = SummaryReporter;
