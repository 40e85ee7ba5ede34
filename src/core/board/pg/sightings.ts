/**
 * When a replica last learned of each key, in the order it learned: from its own statements (a write,
 * a claim) or from a read. A read takes `mark()` when it begins; a key absent from its answer but
 * `since(key, mark)` is not gone — the replica learned of it after the read began (a task this process
 * just posted, a member that just joined), so the read's answer is the stale one.
 */
export class Sightings<K> {
  private count = 0;
  private readonly at = new Map<K, number>();

  /** Taken when a read begins. */
  mark(): number {
    return this.count;
  }

  /** The replica just took a version of `key`. */
  saw(key: K): void {
    this.at.set(key, ++this.count);
  }

  /** Whether the replica took a version of `key` after `mark` was taken. */
  since(key: K, mark: number): boolean {
    return (this.at.get(key) ?? 0) > mark;
  }
}
