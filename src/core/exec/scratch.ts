import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pidAlive } from '../board/pid.js';

const KINDS = ['check', 'smoke', 'index', 'mcp', 'empty', 'rehearsal'] as const;
export type ScratchKind = (typeof KINDS)[number];

const SCRATCH = new RegExp(`^autoteam-(${KINDS.join('|')})-(?:(\\d+)-)?[A-Za-z0-9]{6}$`);
/** A scratch folder of an older autoteam (no pid in its name) is only removed past this age. */
const UNNAMED_AFTER_MS = 3_600_000;

/**
 * A scratch folder in the system temp folder (a review's check run, a smoke run, a copy of git's
 * index), named after this process so that a later sweep can tell whether its owner is gone. The
 * caller removes it when done; sweepScratch removes what a killed process could not.
 */
export function scratchDir(kind: ScratchKind): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `autoteam-${kind}-${process.pid}-`));
}

let empty: string | null = null;

/**
 * An empty, read-only regular file of this process's own, laid over a file the sandbox hides (a
 * `.env`): it reads as empty. /dev/null cannot stand in: bubblewrap's binds are nodev, so the device
 * would answer `Permission denied`, which invites code to try to get round it.
 */
export function emptyFile(): string {
  // Only as made: a regular empty file, not a link (bubblewrap follows one) put there since.
  const was = empty ? fs.lstatSync(empty, { throwIfNoEntry: false }) : undefined;
  if (was?.isFile() && was.size === 0) return empty!;
  const dir = scratchDir('empty');
  const file = path.join(dir, 'empty');
  fs.writeFileSync(file, '', { mode: 0o444 });
  // Gone with its thread or process; one left by a killed process goes at the next sweep.
  if (empty === null) process.once('exit', () => fs.rmSync(path.dirname(empty!), { recursive: true, force: true }));
  empty = file;
  return file;
}

/** Removes the scratch folders of autoteam processes of this host that are gone; returns how many. */
export function sweepScratch(tmp = os.tmpdir()): number {
  let removed = 0;
  let names: string[];
  try {
    names = fs.readdirSync(tmp);
  } catch {
    return 0;
  }
  for (const name of names) {
    const match = SCRATCH.exec(name);
    if (!match) continue;
    const dir = path.join(tmp, name);
    const pid = match[2] ? Number(match[2]) : null;
    const gone = pid !== null ? pid !== process.pid && !pidAlive(pid) : Date.now() - (fs.statSync(dir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > UNNAMED_AFTER_MS;
    if (!gone) continue;
    fs.rmSync(dir, { recursive: true, force: true });
    removed++;
  }
  return removed;
}
