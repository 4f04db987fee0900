/** A least-recently-used cache bounded by entry count and by a cost (estimated bytes). */
export class LruCache<K, V> {
  private readonly entries = new Map<K, { value: V; cost: number }>();
  private totalCost = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxCost: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get cost(): number {
    return this.totalCost;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    // Re-insert: a Map iterates in insertion order, so the first key is the least recent.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Adds (or replaces) an entry; one costlier than the whole budget is not kept. */
  set(key: K, value: V, cost: number): void {
    this.delete(key);
    if (cost > this.maxCost || this.maxEntries < 1) return;
    this.entries.set(key, { value, cost });
    this.totalCost += cost;
    while (this.entries.size > this.maxEntries || this.totalCost > this.maxCost) {
      const oldest = this.entries.keys().next().value as K;
      this.delete(oldest);
    }
  }

  delete(key: K): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.totalCost -= entry.cost;
  }
}
