/**
 * `autoteam export` and `import` carry the event log whole: a log longer than the file log's
 * rotations keep (3 × 8 MB) is written as one file, its oldest events not dropped on the way.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportBoard, importBoard } from '../../src/core/board/pg/transfer.js';
import { FileEventLog } from '../../src/core/events/file-log.js';
import type { TeamEvent } from '../../src/core/events/schema.js';
import { boardBackends } from '../helpers/board-backends.js';
import { freshDatabase, postgresBin, usePostgres } from '../helpers/postgres.js';

usePostgres();
const { dir, open } = boardBackends('autoteam-pg-transfer-');

describe.runIf(postgresBin)('export and import of the event log', () => {
  it('carries a log past the rotations a file log keeps, every event in its order', async () => {
    const url = await freshDatabase();
    const board = await open(url);
    // 9,000 events of about 4 KB: 36 MB, past the 32 MB three rotations of 8 MB keep.
    const filler = 'x'.repeat(4_000);
    const count = 9_000;
    for (let start = 0; start < count; start += 500) {
      await board.log.append(Array.from({ length: 500 }, (_, i) => ({ type: 'teammate_idle', ts: new Date().toISOString(), team: 't', agent: 'a', reason: `${start + i} ${filler}` }) as TeamEvent));
    }
    const out = dir();
    const exported = await exportBoard(url, out);
    expect(exported.events).toBe(count);
    const reasons = (events: TeamEvent[]) => events.map((event) => Number((event as { reason: string }).reason.split(' ')[0]));
    const files = await new FileEventLog(out).read();
    expect(files.map((event) => event.seq)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    expect(reasons(files)).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(fs.readdirSync(path.join(out, '.team')).filter((name) => name.startsWith('events'))).toEqual(['events.jsonl']);

    const target = await freshDatabase();
    // Import needs a task file or a team config: the export wrote the config.
    expect((await importBoard(out, target)).events).toBe(count);
    const imported = await open(target);
    expect(reasons(await imported.log.read())).toEqual(Array.from({ length: count }, (_, i) => i));
  });

  it('refuses to import into a board a process already used (an event log, no tasks), changing nothing', async () => {
    const source = dir();
    const files = await open(source);
    await files.tasks.create({ subject: 'from the folder', by: 'lead' });
    await files.sink.flush();
    const url = await freshDatabase();
    const used = await open(url);
    await used.log.append([{ type: 'teammate_idle', ts: new Date().toISOString(), team: 'w', agent: 'w2', reason: 'a worker ran here' } as TeamEvent]);
    await expect(importBoard(source, url)).rejects.toThrow(/^the board at postgres:\/\/.* has no tasks but already has an event log \(1 event\): a process used it; import into an empty one$/);
    expect((await used.log.read()).length).toBe(1);
    await used.tasks.refresh();
    expect(used.tasks.list()).toEqual([]);
  });
});
