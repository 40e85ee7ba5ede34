import fs from 'node:fs';
import path from 'node:path';
import { AutoteamError } from '../../errors.js';
import { writeJsonAtomic } from '../atomic-io.js';
import { Mailbox } from '../mailbox.js';
import { RequestStore } from '../requests.js';
import { type Message, MessageSchema, type Task, TaskSchema, TeamConfigSchema } from '../schemas.js';
import { TaskBoard } from '../task-board.js';
import { TeamRegistry } from '../team-registry.js';
import { createPool, describeUrl, transaction, withConnectionRetry } from './connection.js';
import { migrateWith } from './schema.js';
import { insertTask } from './task-sql.js';
import { appendEvents } from './pg-events.js';
import { FileEventLog } from '../../events/file-log.js';
import { counted } from '../../words.js';

/**
 * A PostgreSQL board as files and back: `export` writes the same `.tasks/task_<id>.json`,
 * `.team/config.json`, `.team/requests/<id>.json` and `.team/inbox/<name>.jsonl` the file board keeps
 * (messages are copied, not taken) and the event log as `.team/events.jsonl`, so a database board can
 * always be read as files; `import` loads a file board, its event log too, into an empty database
 * (no tasks, no events), ids kept.
 */

export interface TransferCounts {
  tasks: number;
  requests: number;
  messages: number;
  /** Submitted files (by sha256) carried along. */
  files: number;
  /** The event log's events, in their order (numbered again by the log they go into). */
  events: number;
}

/** How many events go in one write of the log being filled. */
const EVENT_CHUNK = 1_000;

function hasTasks(dir: string): boolean {
  const tasks = path.join(dir, '.tasks');
  return fs.existsSync(tasks) && fs.readdirSync(tasks).some((name) => /^task_\d+\.json$/.test(name));
}

export async function exportBoard(url: string, dir: string): Promise<TransferCounts> {
  const present = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  if (present.length) {
    throw new AutoteamError(`export writes into an empty folder; ${dir} holds ${present.slice(0, 3).join(', ')}${present.length > 3 ? ', …' : ''}${hasTasks(dir) ? ' (a board)' : ''}`, 'USAGE');
  }
  const { openPgBoard } = await import('./pg-board.js');
  const board = await openPgBoard(url, dir, { create: false });
  try {
    const tasks = board.tasks.list();
    fs.mkdirSync(path.join(dir, '.tasks'), { recursive: true });
    for (const task of tasks) writeJsonAtomic(path.join(dir, '.tasks', `task_${task.id}.json`), task);
    const next = Math.max(0, ...tasks.map((task) => task.id)) + 1;
    fs.writeFileSync(path.join(dir, '.tasks', '.next-id'), String(next));
    fs.mkdirSync(path.join(dir, '.team', 'requests'), { recursive: true });
    writeJsonAtomic(path.join(dir, '.team', 'config.json'), board.registry.read());
    const requests = board.requests.list();
    for (const request of requests) writeJsonAtomic(path.join(dir, '.team', 'requests', `${request.id}.json`), request);
    const pool = createPool(url, 1);
    let messages = 0;
    let files = 0;
    try {
      const blobs = await withConnectionRetry(url, () => pool.query<{ sha256: string; data: Buffer }>('SELECT sha256, data FROM autoteam_blobs'));
      fs.mkdirSync(path.join(dir, '.autoteam', 'blobs'), { recursive: true });
      for (const row of blobs.rows) {
        fs.writeFileSync(path.join(dir, '.autoteam', 'blobs', row.sha256), row.data);
        files++;
      }
      const { rows } = await withConnectionRetry(url, () => pool.query<{ recipient: string; body: Message }>('SELECT recipient, body FROM autoteam_messages ORDER BY seq'));
      fs.mkdirSync(path.join(dir, '.team', 'inbox'), { recursive: true });
      for (const row of rows) {
        fs.appendFileSync(path.join(dir, '.team', 'inbox', `${row.recipient}.jsonl`), `${JSON.stringify(row.body)}\n`);
        messages++;
      }
    } finally {
      await pool.end();
    }
    const events = await board.log.read();
    // One file however long: a rotation on the way would drop the oldest events (the live log rotates it later).
    const log = new FileEventLog(dir, { maxBytes: Number.POSITIVE_INFINITY });
    for (let start = 0; start < events.length; start += EVENT_CHUNK) await log.append(events.slice(start, start + EVENT_CHUNK));
    return { tasks: tasks.length, requests: requests.length, messages, files, events: events.length };
  } finally {
    await board.close();
  }
}

export async function importBoard(dir: string, url: string): Promise<TransferCounts> {
  if (!hasTasks(dir) && !fs.existsSync(path.join(dir, '.team', 'config.json'))) {
    throw new AutoteamError(`no board in ${dir} (no task files in .tasks/, no .team/config.json)`, 'USAGE');
  }
  const files = new TaskBoard(dir);
  const tasks: Task[] = files.list();
  const problems = files.problems();
  if (problems.length) throw new AutoteamError(`${counted(problems.length, 'task file')} do${problems.length === 1 ? 'es' : ''} not read, nothing imported: ${problems[0]!.message}`, 'BOARD_FILE_INVALID');
  const registry = new TeamRegistry(dir);
  const config = registry.exists() ? TeamConfigSchema.parse(registry.read()) : null;
  const requests = new RequestStore(dir).list();
  const mailbox = new Mailbox(dir);
  const events = await new FileEventLog(dir).read();
  const pool = createPool(url, 1);
  try {
    await migrateWith(url, pool);
    return await transaction(url, pool, async (client) => {
      const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM autoteam_tasks');
      if (Number(rows[0]!.n) > 0) throw new AutoteamError(`the board at ${describeUrl(url)} already has tasks: import into an empty one`, 'USAGE');
      // A board some process already used (a worker started on it): its log and team would be mixed
      // with the imported ones, the log's times running backwards.
      const { rows: logged } = await client.query<{ n: string }>('SELECT count(*) AS n FROM autoteam_events');
      if (Number(logged[0]!.n) > 0) throw new AutoteamError(`the board at ${describeUrl(url)} has no tasks but already has an event log (${counted(Number(logged[0]!.n), 'event')}): a process used it; import into an empty one`, 'USAGE');
      for (const task of tasks) await insertTask(client, TaskSchema.parse(task), true);
      const maxId = Math.max(0, ...tasks.map((task) => task.id));
      await client.query(`ALTER TABLE autoteam_tasks ALTER COLUMN id RESTART WITH ${maxId + 1}`);
      const maxPipeline = Math.max(0, ...tasks.map((task) => task.pipeline ?? 0));
      await client.query("INSERT INTO autoteam_counters (name, value) VALUES ('pipeline', $1) ON CONFLICT (name) DO UPDATE SET value = GREATEST(autoteam_counters.value, $1)", [maxPipeline]);
      if (config) await client.query("INSERT INTO autoteam_docs (key, doc) VALUES ('config', $1) ON CONFLICT (key) DO UPDATE SET doc = EXCLUDED.doc", [JSON.stringify(config)]);
      for (const request of requests) await client.query('INSERT INTO autoteam_docs (key, doc) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [`requests/${request.id}`, JSON.stringify(request)]);
      let messages = 0;
      for (const name of config ? [config.lead, ...config.members.map((m) => m.name)] : []) {
        for (const message of mailbox.peek(name)) {
          await client.query('INSERT INTO autoteam_messages (recipient, body) VALUES ($1, $2)', [name, JSON.stringify(MessageSchema.parse(message))]);
          messages++;
        }
      }
      let files = 0;
      const blobDir = path.join(dir, '.autoteam', 'blobs');
      for (const name of fs.existsSync(blobDir) ? fs.readdirSync(blobDir).filter((n) => /^[0-9a-f]{64}$/.test(n)) : []) {
        await client.query('INSERT INTO autoteam_blobs (sha256, data) VALUES ($1, $2) ON CONFLICT DO NOTHING', [name, fs.readFileSync(path.join(blobDir, name))]);
        files++;
      }
      for (let start = 0; start < events.length; start += EVENT_CHUNK) await appendEvents(client, events.slice(start, start + EVENT_CHUNK));
      return { tasks: tasks.length, requests: requests.length, messages, files, events: events.length };
    });
  } finally {
    await pool.end();
  }
}

