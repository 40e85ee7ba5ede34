/** A reading of the database's clock is taken when its round trip took at most this long… */
const GOOD_ROUND_TRIP_MS = 25;
/** …or at most twice that of the reading in use, or when the reading in use is this old. */
const KEEP_MS = 60_000;

/**
 * The database's clock as one process reckons it: its own, moved by an offset taken from a statement
 * that returned `clock_timestamp()`, at the midpoint of the statement's round trip. A reading whose
 * round trip was long (it waited for a pooled connection, a lock, a busy core) is set aside while the
 * one in use is better and less than a minute old, so the offset is off by at most half a short round
 * trip. What is stamped by it is held to the database's clock besides (UPDATE_IF_UNCHANGED).
 */
export class DbClock {
  private offsetMs = 0;
  private roundTripMs = Number.POSITIVE_INFINITY;
  private takenAt = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  /** A statement sent at `sentMs` (this process's clock) found the database's clock at `dbNow`. */
  read(dbNow: Date, sentMs: number): void {
    const now = Date.now();
    const roundTrip = now - sentMs;
    if (roundTrip > Math.max(GOOD_ROUND_TRIP_MS, 2 * this.roundTripMs) && now - this.takenAt < KEEP_MS) return;
    this.offsetMs = dbNow.getTime() - (sentMs + now) / 2;
    this.roundTripMs = roundTrip;
    this.takenAt = now;
  }
}
