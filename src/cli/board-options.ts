import fs from 'node:fs';
import path from 'node:path';
import { type Command, Option } from 'commander';
import { type Board, openBoard } from '../core/board/board.js';
import { describeUrl, isPostgresUrl, urlProblem } from '../core/board/pg/url.js';
import { ANY_ROLE } from '../core/board/task-checks.js';
import { AutoteamError } from '../core/errors.js';
import { absoluteRemote } from '../core/git/remote-url.js';
import { loadProjectConfig, type ProjectConfig } from '../core/config/project-config.js';

/** What every command that works on a board shares: --dir, --board, and opening the board. */

/** Usage and configuration errors exit with 2; a failed pipeline with 1. */
export class UsageError extends AutoteamError {
  constructor(message: string) {
    super(message, 'USAGE');
  }
}

/**
 * The board directory a command works in. One rule for every command: the folder must exist — a
 * mistyped --dir is one line naming `mkdir -p`, never a new board made by surprise (a board starts in
 * a folder the person made). A path that is a file, or a directory this process cannot write (for the
 * commands that write), is one line and exit 2 too, not a raw ENOTDIR/EACCES later.
 */
export function boardDir(command: Command, writes = true): string {
  const given = inherited(command, 'dir');
  if (isPostgresUrl(given ?? '')) throw new UsageError('--dir takes a folder; for a board in PostgreSQL use --board <postgres://…>');
  const dir = path.resolve(given ?? process.cwd());
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(dir, { throwIfNoEntry: false });
  } catch (error) {
    throw new UsageError(`--dir: cannot use ${dir} as a board (${(error as NodeJS.ErrnoException).code === 'ENOTDIR' ? 'a part of the path is a file' : String((error as NodeJS.ErrnoException).code)})`);
  }
  if (!stat) throw new UsageError(`--dir: ${dir} does not exist (to start a board there: mkdir -p ${shellQuote(dir)})`);
  if (!stat.isDirectory()) throw new UsageError(`--dir: ${dir} is a file, not a directory`);
  // A board's own folder taken for the board (the folder above holds a board, this one none): the board is the folder above it.
  const own = path.basename(dir) === '.tasks' ? 'tasks' : path.basename(dir) === '.team' ? 'team' : null;
  const above = path.dirname(dir);
  if (own && fs.existsSync(path.join(above, own === 'tasks' ? '.team' : '.tasks')) && !fs.existsSync(path.join(dir, '.tasks'))) {
    throw new UsageError(`${given ? '--dir: ' : ''}${dir} is where a board keeps its ${own}; the board is the folder above it: ${given ? '--dir' : 'cd'} ${shellQuote(above)}`);
  }
  // The board's own folders: one that is a file would surface as a bare EEXIST from mkdir.
  for (const name of ['.tasks', '.team']) {
    const inner = fs.statSync(path.join(dir, name), { throwIfNoEntry: false });
    if (inner && !inner.isDirectory()) throw new UsageError(`--dir: ${path.join(dir, name)} is a file, where autoteam keeps its ${name === '.tasks' ? 'tasks' : 'team'} (a folder): move it away`);
  }
  if (writes) {
    // A folder made and removed, not the permission bits: those do not bind root, and /proc or /sys
    // refuse a folder whatever they say. The board's own folders too, where they are (made by another
    // user, say): a lock or a task file there would fail as a bare EACCES.
    for (const sub of ['', '.tasks', path.join('.tasks', '.locks'), '.team', path.join('.team', '.locks'), path.join('.team', 'inbox')]) {
      const folder = path.join(dir, sub);
      if (sub && !fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory()) continue;
      try {
        fs.rmdirSync(fs.mkdtempSync(path.join(folder, '.autoteam-probe-')));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'error';
        const why = code === 'EACCES' || code === 'EROFS' || code === 'EPERM' ? 'not writable' : `no folder can be made there: ${code}`;
        throw new UsageError(`--dir: cannot use ${dir} as a board (${sub ? `its ${folder} is ${why}` : why})`);
      }
    }
  }
  return dir;
}

/**
 * An option given to the command or to any command above it, the nearest first: `autoteam --dir D
 * mcp serve` names the board two levels up (the program's option, before `mcp`).
 */
export function inherited(command: Command, name: 'dir' | 'board'): string | undefined {
  for (let at: Command | null = command; at; at = at.parent) {
    const value = at.opts()[name] as string | undefined;
    if (value !== undefined) return value;
  }
  return undefined;
}

/** `dir` as one shell word, for a command the person may paste. */
function shellQuote(dir: string): string {
  return /^[\w@%+=:,./-]+$/.test(dir) ? dir : `'${dir.replaceAll("'", "'\\''")}'`;
}

export function existingBoardDir(command: Command): string {
  return boardDir(command, false);
}

/**
 * For the commands that only read a board (tasks, show, events): a broken autoteam.config.json in the board
 * folder does not stop them, but is said once on stderr, since the team would not start under it.
 */
export function warnOfBrokenConfig(command: Command): void {
  try {
    loadProjectConfig(path.resolve(inherited(command, 'dir') ?? process.cwd()));
  } catch (error) {
    if (error instanceof AutoteamError) console.error(`autoteam: warning: ${error.message} (the commands that run or change the team, such as run, post, worker and the REPL, refuse it until it is mended)`);
  }
}

/**
 * The config's warnings (a hook matcher nothing has, …), each a line marked as one: autoteam goes on.
 * `team`: the team this command starts, sized by its flags; a role it has is not said to have no one,
 * nor one a live member of another process on the board has (`covered`: its tasks do not wait).
 */
export function sayConfigWarnings(project: Pick<ProjectConfig, 'file' | 'warnings' | 'unstaffed'>, team?: ReadonlyArray<{ role: string }>, covered?: (role: string) => boolean): void {
  const staffed = (role: string) => (team?.some((member) => member.role === role || member.role === ANY_ROLE) ?? false) || (covered?.(role) ?? false);
  const answered = new Set((project.unstaffed ?? []).filter((gap) => staffed(gap.role)).map((gap) => gap.warning));
  for (const warning of project.warnings) if (!answered.has(warning)) console.error(`autoteam: warning: ${project.file ?? 'the config'}: ${warning}`);
}

export const dirOption = () => new Option('--dir <path>', 'board root (holds .tasks/ and .team/); with --board, the local folder for workspaces; default: the current directory');
export const boardOption = () => new Option('--board <url>', 'a postgres:// URL: the board in PostgreSQL, shared across machines (env AUTOTEAM_BOARD)');

/** The PostgreSQL board's URL from --board or AUTOTEAM_BOARD, or undefined for the file board in --dir. */
export function boardUrl(command: Command): string | undefined {
  const flag = inherited(command, 'board');
  const name = flag !== undefined ? '--board' : 'AUTOTEAM_BOARD';
  const raw = flag ?? process.env.AUTOTEAM_BOARD;
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (!value) {
    // An empty variable means "not set"; an empty flag is a mistake.
    if (flag === undefined) return undefined;
    throw new UsageError('--board needs a postgres:// URL (without it, the board is the folder --dir)');
  }
  if (!isPostgresUrl(value)) {
    const instead = flag === undefined ? 'unset it for a board in a folder (--dir <folder>)' : 'for a board in a folder, use --dir <folder>';
    throw new UsageError(`${name} takes a postgres:// URL, got '${describeUrl(value)}' (${instead})`);
  }
  const problem = urlProblem(value);
  if (problem) throw new UsageError(`${name}: '${describeUrl(value)}': ${problem}`);
  return value;
}

/** The board a read-only command looks at: the PostgreSQL board, or the file board in --dir. */
export async function openExisting(command: Command): Promise<Board> {
  const url = boardUrl(command);
  if (url) return openBoard(url, boardDir(command, false), { create: false });
  const dir = existingBoardDir(command);
  if (!fs.existsSync(path.join(dir, '.tasks'))) throw new UsageError(`no board in ${dir} (no .tasks/ directory)`);
  return openBoard(dir);
}

/**
 * The remote pipelines' branches live on, or undefined: `--remote` over the config's
 * `repository.remote`, a path in the flag taken from the current folder (the config's is from its own).
 */
export function remoteOf(options: Record<string, unknown>, project: { repository?: { remote: string } }): string | undefined {
  if (typeof options.remote !== 'string') return project.repository?.remote;
  if (!options.remote.trim()) throw new UsageError('--remote needs a git URL or the path of a repository');
  return absoluteRemote(options.remote, process.cwd());
}

/**
 * The line that says `--no-worktree` leaves the config's `repository.remote` unused, or null (a
 * `--remote` flag with it is refused instead: repoChoice).
 */
export function unusedRemoteNote(options: Record<string, unknown>, configRemote: string | undefined): string | null {
  return options.worktree === false && typeof options.remote !== 'string' && configRemote !== undefined
    ? 'autoteam: --no-worktree: repository.remote of autoteam.config.json is not used; pipelines work in workspace/<n>'
    : null;
}
