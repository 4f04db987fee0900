import { setFlagsFromString } from 'node:v8';

let compiled: ((a: unknown, b: unknown) => boolean) | undefined;

/**
 * Whether V8 gave two objects the same hidden class (map). For tests that keep hot-path
 * objects from getting a new map per call, which Node 20's V8 does for an object built by
 * spread and then extended (docs/performance.md, "What the measurements showed").
 */
export function haveSameMap(a: unknown, b: unknown): boolean {
  if (!compiled) {
    // The natives syntax is only parsed in functions compiled after the flag is set.
    setFlagsFromString('--allow-natives-syntax');
    compiled = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: unknown, b: unknown) => boolean;
  }
  return compiled(a, b);
}
