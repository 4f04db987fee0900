// A synthetic background load for bench/rails-reconcile.mjs's control run, in a process of its
// own (forked): a burst of BURST_MS of busy CPU, RATE times a second, evenly spaced, until killed
// or the bench is gone.
// It does no I/O, so what it moves in the measured reads is the CPU it takes and nothing else.
const burstMs = Number(process.env.BURST_MS);
const rate = Number(process.env.RATE);
if (!(burstMs > 0) || !(rate > 0)) throw new Error('BURST_MS and RATE must be positive numbers');
setInterval(() => {
  const end = performance.now() + burstMs;
  while (performance.now() < end);
}, 1000 / rate);
// The bench gone (its channel closed), even by a crash: stop.
process.on('disconnect', () => process.exit(0));
