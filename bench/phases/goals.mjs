// The goals' lines of bench/run.mjs, each a ratio or a latency measured in this run, ok or MISS.
import { EVENTS_PER_BATCH } from '../lib/event-bodies.mjs';
import { PHASES, REF_COMMIT, ROUNDS, apiNodeArgs, check, log, stealNote } from '../lib/harness.mjs';

export function printGoals({ servers, bufferedApi, throughput, latency, readResults, scale }) {
  const { saturation, apiEvents, refEvents, baseEvents, bufferedEvents, bufferedStored } = throughput;
  const { latencyRate, target } = latency;
  const { scaledIngest, afterCheckpointIngest, scaledRead, emptyScaleRead, scaleReadRate } = scale ?? {};
  const ratio = apiEvents / Math.max(1, refEvents);
  const errorsOf = (label) =>
    saturation[label].reduce((n, r) => n + r.non2xx + r.errors, 0) + (target[label] ? target[label].non2xx + target[label].errors : 0);
  log('');
  log(`Batch body: ${EVENTS_PER_BATCH} events, ~${Math.round(servers[0].bodies.sampleBytes / 1024)} KB; api node flags: ${apiNodeArgs || 'none'}`);
  log('Goals, each a ratio or a latency measured in this run:');
  if (PHASES.has('ingest'))
    log(
      `  ${check(ratio >= 1.5)} 1. ingestion    ${ratio.toFixed(2)}x ${REF_COMMIT} (${apiEvents} vs ${refEvents} events/s, mean of ${ROUNDS}; goal >= 1.5x); bare baseline ${baseEvents} events/s (api/baseline ${(apiEvents / Math.max(1, baseEvents)).toFixed(2)})${stealNote(...saturation.api, ...saturation.ref)}`,
    );
  if (PHASES.has('ingest') && bufferedApi)
    log(
      `  ${check(bufferedEvents / Math.max(1, refEvents) >= 1.5)} 1. ingestion, buffered ${(bufferedEvents / Math.max(1, refEvents)).toFixed(2)}x ${REF_COMMIT} by acknowledgements (${bufferedEvents} events/s); ` +
        `stored ${bufferedStored} events/s counting until the last commit (${(bufferedStored / Math.max(1, refEvents)).toFixed(2)}x)${stealNote(...saturation.buffered, ...saturation.ref)}`,
    );
  if (PHASES.has('latency'))
    log(
      `  ${check(target.api.p99 < 50)} 2. ack p99     ${target.api.p99} ms at ${latencyRate * EVENTS_PER_BATCH} events/s = 70 % of the baseline (p50 ${target.api.p50} ms; goal < 50 ms); ref ${target.ref.p99} ms, baseline ${target.baseline.p99} ms${stealNote(target.api)}`,
    );
  for (const r of PHASES.has('reads') ? readResults : [])
    log(
      `  ${check(r.paced.p99 < 10)} 3. ${r.name.padEnd(34)} p99 ${r.paced.p99} ms at ${r.rate} req/s, half of the bare saturation (goal < 10 ms; bare ${r.barePaced.p99} ms); ratio ${r.ratio.toFixed(2)} to the plain bare baseline (information)${stealNote(r.paced, r.barePaced)}`,
    );
  // The framework's share: the same reads against the bare server that prepares the same
  // statements (the database's work is then the same on both sides), with the API's CPU per
  // request beside the floor's.
  for (const r of PHASES.has('reads') ? readResults : [])
    log(
      `  ${check(r.preparedRatio >= 0.9)} 3. ${r.name.padEnd(34)} ratio ${r.preparedRatio.toFixed(2)} to the bare baseline that prepares (goal >= 0.9; ${r.api.rps} vs ${r.prepared.rps} req/s); ` +
        `API CPU/req ${r.api.cpuMs ?? '?'} ms vs the floor's ${r.prepared.cpuMs ?? '?'} ms (postgres ${r.api.pgCpuMs ?? '?'} vs ${r.prepared.pgCpuMs ?? '?'} ms)${stealNote(r.api, r.prepared)}`,
    );
  if (PHASES.has('scale')) {
    const emptyP99 = emptyScaleRead.p99;
    const scaleIngestRatio = scaledIngest.eventsPerSecond / Math.max(1, apiEvents);
    if (PHASES.has('ingest'))
      log(
        `  ${check(scaleIngestRatio >= 0.8)} 4. scale ingest ${scaledIngest.eventsPerSecond} events/s with data vs ${apiEvents} empty (${scaleIngestRatio.toFixed(2)}; goal >= 0.80)${stealNote(scaledIngest, ...saturation.api)}`,
      );
    else log(`  n/a  4. scale ingest ${scaledIngest.eventsPerSecond} events/s with data (the empty-database figure comes from the ingest phase, not run)`);
    log(
      `  info 4. scale ingest right after the checkpoint ${afterCheckpointIngest.eventsPerSecond} events/s (${afterCheckpointIngest.fpiPerBatch ?? '?'} full-page images per batch)` +
        (PHASES.has('ingest') ? ` (${(afterCheckpointIngest.eventsPerSecond / Math.max(1, apiEvents)).toFixed(2)} of empty)` : ''),
    );
    log(
      `  ${check(scaledRead.p99 <= Math.max(emptyP99 * 1.25, emptyP99 + 1))} 4. scale read   p99 ${scaledRead.p99} ms with data vs ${emptyP99} ms empty at ${scaleReadRate} req/s (goal: <= 1.25x or +1 ms)${stealNote(scaledRead, emptyScaleRead)}`,
    );
  }
  if (PHASES.has('latency') && bufferedApi)
    log(
      `  ${check(target.buffered.p99 < 50)} 2. ack p99, buffered ${target.buffered.p99} ms at ${latencyRate * EVENTS_PER_BATCH} events/s (p50 ${target.buffered.p50} ms; goal < 50 ms)${stealNote(target.buffered)}`,
    );
  log(
    `  non-2xx/errors: api ${errorsOf('api')}, ref ${errorsOf('ref')}, baseline ${errorsOf('baseline')}${bufferedApi ? `, buffered ${errorsOf('buffered')}` : ''}`,
  );
}
