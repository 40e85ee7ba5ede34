/**
 * Appends events to a board's log from a process of its own:
 * `node --import tsx tests/helpers/event-appender.ts <location> <rootDir> <agent> <count>`.
 * Each event is its own append, so appenders in several processes interleave.
 */
import { openBoard } from '../../src/core/board/board.js';

const [location, rootDir, agent, count] = process.argv.slice(2);
const board = await openBoard(location!, rootDir!);
for (let i = 1; i <= Number(count); i++) {
  await board.log.append([{ type: 'teammate_idle', ts: new Date().toISOString(), team: 't', agent: agent!, reason: `${agent} ${i}` }]);
}
await board.close();
