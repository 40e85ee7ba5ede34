/**
 * What a thread holds only while it works — its process launcher — registered here and let go when
 * the teammate settles into idle (worker/idle-collector.ts), so an idle teammate holds none of it.
 * Whatever is let go is made again on its next use.
 */
const releases = new Set<() => void>();

/** Registers `release` to run when the thread settles into idle; returns its removal. */
export function releaseWhenIdle(release: () => void): () => void {
  releases.add(release);
  return () => releases.delete(release);
}

/** Lets go of everything registered (the idle collector, a second into idle). */
export function releaseIdle(): void {
  for (const release of releases) release();
}
