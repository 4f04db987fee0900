/**
 * Pure maths of a partially throttled batch. The bucket grants `granted` tokens (one per
 * event): the first `granted` events land. While throttling, one error event per
 * fingerprint per minute still lands beyond the tokens: the first error event of each
 * fingerprint among the rest is a candidate, and it lands when its allowance is claimed.
 */

export const ERROR_ALLOWANCE_WINDOW_MS = 60_000;

export interface ThrottleCandidate {
  isError: boolean;
  fingerprint: string | null;
}

export interface AllowanceCandidate {
  index: number;
  fingerprint: string;
}

/** The first error event of each fingerprint among the events beyond the granted tokens. */
export function allowanceCandidates(events: readonly ThrottleCandidate[], granted: number): AllowanceCandidate[] {
  const seen = new Set<string>();
  const candidates: AllowanceCandidate[] = [];
  for (let index = Math.max(0, granted); index < events.length; index++) {
    const { isError, fingerprint } = events[index];
    if (!isError || fingerprint === null || seen.has(fingerprint)) continue;
    seen.add(fingerprint);
    candidates.push({ index, fingerprint });
  }
  return candidates;
}

/** Indexes of the events that land: the granted prefix plus the candidates whose allowance was claimed. */
export function landedIndexes(total: number, granted: number, candidates: readonly AllowanceCandidate[], claimed: ReadonlySet<string>): number[] {
  const landed: number[] = [];
  const prefix = Math.min(total, Math.max(0, granted));
  for (let i = 0; i < prefix; i++) landed.push(i);
  for (const candidate of candidates) if (claimed.has(candidate.fingerprint)) landed.push(candidate.index);
  return landed;
}

export interface ThrottledSummary {
  dropped: number;
  sampleRate: number;
  retryAfterMs: number;
}

/** The `throttled` object of a 202, or undefined when the whole batch landed. */
export function throttledSummary(total: number, landed: number, decision: { sampleRate: number; retryAfterMs: number }): ThrottledSummary | undefined {
  const dropped = total - landed;
  if (dropped <= 0) return undefined;
  return {
    dropped,
    sampleRate: Math.min(1, Math.max(0, Math.round(decision.sampleRate * 10_000) / 10_000)),
    retryAfterMs: Math.max(0, Math.ceil(decision.retryAfterMs)),
  };
}
