/**
 * A board outage as the lead sees it (a database that went away). While the board cannot be
 * reached, every teammate's poll and the watcher fail again every few seconds: the first error of
 * each source is shown and the rest are counted, and when the board answers again one notice says so.
 * No heartbeat could be written meanwhile, so `lastSeen` tells the liveness check from when to
 * count a member's silence: nobody is declared dead for the outage itself.
 */
export class BoardOutage {
  /** When the current outage was first seen, or null while the board answers. */
  since: number | null = null;
  /**
   * The last time the board was seen unreachable, or when it was seen answering again after an
   * outage (0: never): until then no heartbeat could be written.
   */
  lastSeen = 0;
  private hidden = 0;
  private readonly shown = new Set<string>();

  constructor(
    private readonly now: () => number = Date.now,
    /** Told when an outage starts (`down`, its first source) and ends (`up`, the notice): the board_outage events. */
    private readonly onChange: (state: 'down' | 'up', source: string, message: string) => void = () => undefined,
  ) {}

  /** Records an error that says the board cannot be reached; true when it should be shown. */
  report(source: string, message = 'the board cannot be reached'): boolean {
    const at = this.now();
    if (this.since === null) this.onChange('down', source, message);
    this.since ??= at;
    this.lastSeen = at;
    if (this.shown.has(source)) {
      this.hidden++;
      return false;
    }
    this.shown.add(source);
    return true;
  }

  /** True when an error of `code` from `source` is a repeat of this outage's, not to be shown; `message` is the error's, for the outage's first. */
  hides(source: string, code: string, message?: string): boolean {
    return code === 'BOARD_UNREACHABLE' && !this.report(source, message);
  }

  /**
   * During an outage, tries `check` (a read of the board): the notice that ends the outage when it
   * succeeds, null otherwise (and while there is no outage, without calling it).
   */
  async probe(check: () => Promise<unknown>): Promise<string | null> {
    if (this.since === null) return null;
    try {
      await check();
    } catch {
      this.report('probe');
      return null;
    }
    return this.recovered();
  }

  /**
   * `probe` with `check` every `everyMs` (2 s), `say` told the notice that ends an outage: for a front
   * end with no timer of its own to probe on (`autoteam worker`, `autoteam events --follow`). Returns the stop.
   */
  probeEvery(check: () => Promise<unknown>, say: (notice: string) => void, everyMs = 2_000): () => void {
    const timer = setInterval(() => {
      void this.probe(check).then((notice) => {
        if (notice) say(notice);
      });
    }, everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** The board answered: the notice that ends the outage, or null when there was none. */
  recovered(): string | null {
    if (this.since === null) return null;
    const seconds = Math.max(1, Math.round((this.now() - this.since) / 1000));
    const hidden = this.hidden ? `; ${this.hidden} repeated error${this.hidden === 1 ? '' : 's'} not shown` : '';
    this.since = null;
    this.lastSeen = this.now();
    this.hidden = 0;
    this.shown.clear();
    const notice = `the board answers again (unreachable for about ${seconds} s${hidden})`;
    this.onChange('up', 'probe', notice);
    return notice;
  }
}
