import { spawn } from 'node:child_process';
import os from 'node:os';
import { type Command, Option } from 'commander';
import { openBoard } from '../core/board/board.js';
import { loadProjectConfig } from '../core/config/project-config.js';
import { serializeError } from '../core/errors.js';
import { BoardLead } from '../core/lead/board-lead.js';
import type { LeadControls } from '../core/lead/lead-api.js';
import { StageRegistry } from '../core/stages/stage-registry.js';
import { assetsBuilt } from '../web/assets.js';
import { isLoopback } from '../web/guard.js';
import { startWebBoard, type WebBoard } from '../web/server.js';
import { boardDir, boardOption, boardUrl, dirOption, sayConfigWarnings, UsageError } from './board-options.js';

export const DEFAULT_WEB_PORT = 7878;

/** `--web[=PORT]` on the REPL and on `run`: the web board served beside them. */
export const webOption = () => new Option('--web [port]', `serve the web board beside it (default port ${DEFAULT_WEB_PORT}; 0 picks a free one)`);

/** The port a `--port`/`--web` value names. */
export function webPort(value: unknown, flag: string): number {
  if (value === true || value === undefined) return DEFAULT_WEB_PORT;
  const port = Number(value);
  if (!/^\d+$/.test(String(value)) || port > 65_535) throw new UsageError(`${flag}: a port is a whole number from 0 to 65535, got '${String(value)}'`);
  return port;
}

/**
 * Serves the web board over `controls` and prints its address (`say`: stdout for `autoteam web`,
 * stderr beside a REPL or a run, whose output stays theirs).
 */
export async function serveWeb(controls: LeadControls, options: { host?: string; port: number; open?: boolean; flag: '--port' | '--web' }, say: (line: string) => void): Promise<WebBoard> {
  if (!assetsBuilt()) throw new UsageError('the web board has not been built: run npm run build');
  const host = options.host ?? '127.0.0.1';
  const web = await startWebBoard({ controls, host, port: options.port }).catch((error: unknown) => {
    const { code, message } = serializeError(error);
    throw new UsageError(`web board: ${message}${code === 'PORT_IN_USE' ? ` (${options.flag} 0 picks a free one)` : ''}`);
  });
  say(`autoteam web: ${web.url}`);
  if (!isLoopback(host)) {
    if (host === '0.0.0.0' || host === '::') say(`autoteam web: from another machine: http://${os.hostname()}:${web.port}/?token=${web.token}`);
    say(`autoteam web: warning: listening on ${host}, reachable from other machines; anyone with the token can act on the board. An SSH tunnel (ssh -L ${web.port}:127.0.0.1:${web.port} <this machine>) keeps it on 127.0.0.1.`);
  }
  if (options.open) openBrowser(web.url, say);
  return web;
}

function openBrowser(url: string, say: (line: string) => void): void {
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
  child.on('error', () => say(`autoteam web: could not start ${opener}; open the address above in a browser`));
  child.unref();
}

export function registerWebCommand(program: Command): void {
  program
    .command('web')
    .description('serve the web board: the board, the team and each pipeline live in a browser, with the REPL\'s actions')
    .addOption(dirOption())
    .addOption(boardOption())
    .option('--port <port>', `port to listen on (0 picks a free one)`, String(DEFAULT_WEB_PORT))
    .option('--host <address>', 'address to listen on; anything but 127.0.0.1/localhost is reachable from other machines', '127.0.0.1')
    .option('--open', 'open it in the default browser')
    .action(async (options: { port: string; host: string; open?: boolean }, command: Command) => {
      const host = options.host.trim();
      if (!host) throw new UsageError('--host needs an address, e.g. 127.0.0.1');
      const port = webPort(options.port, '--port');
      const dir = boardDir(command);
      const url = boardUrl(command);
      const project = loadProjectConfig(dir);
      sayConfigWarnings(project);
      const board = await openBoard(url ?? dir, dir, url ? { create: false } : {});
      const lead = new BoardLead(board, { stages: StageRegistry.from(project.stages), ...(project.repository ? { repository: project.repository } : {}) });
      let web: WebBoard | null = null;
      try {
        await lead.start();
        web = await serveWeb(lead, { host, port, open: options.open === true, flag: '--port' }, (line) => console.log(line));
        await untilSignal();
      } finally {
        await web?.close('autoteam web was stopped');
        await lead.close();
        await board.close();
      }
    });
}

/** Resolves on Ctrl-C or SIGTERM. */
function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}
