import fs from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { redact, secretValues } from '../trace/redact.js';
import { parseJsonText, readText, writeJsonAtomic } from './atomic-io.js';
import { keyOf } from './task-index.js';
import { BoardFileError, describeJsonError } from '../errors.js';
import { DEFAULT_LOCK_STALE_MS, withLock } from './lock.js';

/**
 * Small JSON documents of a board — the team config (`config`), the lead's lease (`lead`), protocol
 * requests (`requests/<id>`) — with the same operations on every backend: a read that answers at once
 * (from the file, or the PostgreSQL board's replica) and a read-change-write atomic against every
 * other writer. The classes above (TeamRegistry, RequestStore, LeadLease) hold the rules.
 */
export interface DocStore {
  /** Where a document lives, for error messages: a file path, or `<url>#<key>`. */
  describe(key: string): string;
  /** The document, validated by `schema`, or undefined when there is none. Throws BoardFileError when invalid. */
  read<S extends z.ZodTypeAny>(key: string, schema: S): z.output<S> | undefined;
  /** Keys under `prefix` (e.g. `requests/`). */
  keys(prefix: string): string[];
  /**
   * Reads the document (raw, or undefined), applies `fn`, and writes what it returns in `write`
   * (`null` deletes it, undefined leaves it) — atomically against every other writer. Returns `result`
   * of the call whose write landed. `fn` may be called more than once (PostgreSQL tries it on its
   * replica's copy first): it must decide from `current` alone, and keep nothing from a call before.
   */
  change<T>(key: string, fn: (current: unknown) => { write?: unknown; result: T }, options?: ChangeOptions): Promise<T>;
}

export interface ChangeOptions {
  /** A document that is not valid JSON counts as absent (a lease), instead of being refused (a config). */
  overwriteInvalid?: boolean;
  /**
   * A heartbeat: the change wakes nobody, and other processes see it on their next poll. On the
   * file board no document change wakes anyone, so this only matters where one would (PostgreSQL).
   */
  quiet?: boolean;
}

/**
 * How old a file's mtime must be, when it is read, for its identity to stand for its content: a
 * filesystem may hand a freed inode straight back and stamp times in ticks of up to 10 ms, so two
 * writes of the same size within one tick can look alike (git's "racy" rule).
 */
const SETTLED_MS = 50;

/**
 * Documents as JSON files under `.team/` (`config` → `.team/config.json`), each written atomically
 * under a lock. A top-level document (the team config, the lease) read again costs one stat while its
 * file is the version read last — its identity, inode, size and mtime, settled (SETTLED_MS) when read;
 * a hand edit changes the size or the mtime: the team config is read for every event a teammate logs
 * (its team's name), which was an open, a parse and a validation each time.
 */
export class FileDocStore implements DocStore {
  readonly dir: string;
  private readonly secrets = secretValues();
  /** The last version read of each document: its file's identity, the schema it was validated by, and the value. */
  private readonly versions = new Map<string, { version: string; schema: z.ZodTypeAny; value: unknown }>();

  constructor(
    rootDir: string,
    private readonly lockStaleMs = DEFAULT_LOCK_STALE_MS,
  ) {
    this.dir = path.join(path.resolve(rootDir), '.team');
  }

  private file(key: string): string {
    return path.join(this.dir, `${key}.json`);
  }

  describe(key: string): string {
    return this.file(key);
  }

  read<S extends z.ZodTypeAny>(key: string, schema: S): z.output<S> | undefined {
    const file = this.file(key);
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) {
      this.versions.delete(key);
      return undefined;
    }
    const known = this.versions.get(key);
    // A copy: the caller may change what it was given.
    if (known && known.schema === schema && known.version === keyOf(stat)) return structuredClone(known.value) as z.output<S>;
    // The version read is the one its descriptor's stat names (a write landing between the two is read next time).
    const { text, version, settled } = readVersion(file);
    const value = parseJsonText(file, text, schema);
    // Requests (`requests/<id>`) are many and never removed: they are read from their files.
    if (settled && !key.includes('/')) this.versions.set(key, { version, schema, value: structuredClone(value) });
    else this.versions.delete(key);
    return value;
  }

  keys(prefix: string): string[] {
    const dir = path.join(this.dir, prefix);
    if (!fs.existsSync(dir)) return [];
    return fs
      .readdirSync(dir)
      .filter((name) => name.endsWith('.json'))
      .map((name) => `${prefix}${name.slice(0, -'.json'.length)}`);
  }

  async change<T>(key: string, fn: (current: unknown) => { write?: unknown; result: T }, options: ChangeOptions = {}): Promise<T> {
    const file = this.file(key);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    return withLock(
      file,
      () => {
        let current: unknown;
        const text = fs.existsSync(file) ? readText(file) : undefined;
        try {
          current = text === undefined ? undefined : JSON.parse(text);
        } catch (error) {
          // Never written over unless asked: a broken hand edit is reported, not lost.
          if (!options.overwriteInvalid) throw new BoardFileError(file, describeJsonError(error, text ?? ''));
          current = undefined;
        }
        const { write, result } = fn(current);
        if (write === null) fs.rmSync(file, { force: true });
        else if (write !== undefined) writeJsonAtomic(file, write, (text) => redact(text, this.secrets));
        return result;
      },
      { staleMs: this.lockStaleMs },
    );
  }
}

/** The file's text and the version it is, through one descriptor. */
function readVersion(file: string): { text: string; version: string; settled: boolean } {
  const fd = fs.openSync(file, 'r');
  try {
    const stat = fs.fstatSync(fd);
    if (stat.isDirectory()) throw new BoardFileError(file, 'is a folder, not a file');
    return { text: fs.readFileSync(fd, 'utf8'), version: keyOf(stat), settled: Date.now() - stat.mtimeMs >= SETTLED_MS };
  } finally {
    fs.closeSync(fd);
  }
}
