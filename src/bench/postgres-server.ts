import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A throwaway PostgreSQL server for the tests and the benchmark: `initdb` into a temp folder (as the
 * `postgres` user when running as root, since initdb refuses root), `pg_ctl start` on 127.0.0.1 and a
 * free port, fsync off. `stop()` stops it and removes the folder.
 */

export interface PostgresServer {
  url: string;
  port: number;
  stop(): void;
  /** Stops the server, keeping its data (an outage). */
  pause(): void;
  /** Starts a paused server again on the same port. */
  resume(): void;
}

/** The folder holding pg_ctl and initdb: on PATH, or Debian's /usr/lib/postgresql/<version>/bin. */
export function findPostgresBin(): string | null {
  const onPath = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (onPath.status === 0 && fs.existsSync(path.join(onPath.stdout.trim(), 'pg_ctl'))) return onPath.stdout.trim();
  const debian = '/usr/lib/postgresql';
  if (fs.existsSync(debian)) {
    const versions = fs.readdirSync(debian).filter((v) => fs.existsSync(path.join(debian, v, 'bin', 'pg_ctl'))).sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(debian, versions[0], 'bin');
  }
  return null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function startPostgres(bin = findPostgresBin()): Promise<PostgresServer> {
  if (!bin) throw new Error('no PostgreSQL binaries (pg_ctl, initdb) found on PATH or in /usr/lib/postgresql/*/bin');
  const root = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-pg-'));
  const as = (command: string, args: string[]) => (root ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]) as [string, string[]];
  if (root) execFileSync('chown', ['postgres', dir]);
  const data = path.join(dir, 'data');
  const [initCmd, initArgs] = as(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  execFileSync(initCmd, initArgs, { stdio: 'pipe' });
  const port = await freePort();
  const options = [`-p ${port}`, `-k ${dir}`, "-c listen_addresses='127.0.0.1'", '-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off', '-c max_connections=200'].join(' ');
  const [ctlCmd, ctlArgs] = as(path.join(bin, 'pg_ctl'), ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', '-t', '30', 'start']);
  execFileSync(ctlCmd, ctlArgs, { stdio: 'pipe' });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    pause() {
      const [stopCmd, stopArgs] = as(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
      execFileSync(stopCmd, stopArgs, { stdio: 'pipe' });
    },
    resume() {
      execFileSync(ctlCmd, ctlArgs, { stdio: 'pipe' });
    },
    stop() {
      const [stopCmd, stopArgs] = as(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      spawnSync(stopCmd, stopArgs, { stdio: 'ignore' });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

let shared: Promise<PostgresServer | null> | null = null;
let databases = 0;

/**
 * A fresh database on the benchmark's one server (started on first use, stopped by
 * stopBenchPostgres), or null when there are no PostgreSQL binaries.
 */
export async function benchDatabase(label: string, log: (line: string) => void = () => {}): Promise<string | null> {
  shared ??= (async () => {
    const bin = findPostgresBin();
    if (!bin) return null;
    log(`starting a throwaway PostgreSQL server (${bin}, fsync off); it is stopped and removed at the end`);
    return startPostgres(bin);
  })();
  const server = await shared;
  if (!server) return null;
  const { default: pg } = await import('pg');
  const name = `bench_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${++databases}`;
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  return server.url.replace(/\/postgres$/, `/${name}`);
}

export async function stopBenchPostgres(): Promise<void> {
  const server = shared ? await shared : null;
  server?.stop();
  shared = null;
}
