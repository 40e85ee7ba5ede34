/** The layers import downwards only: core knows no front end, ui knows no cli. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

function imports(dir: string): Array<{ file: string; from: string }> {
  const found: Array<{ file: string; from: string }> = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.tsx?$/.test(entry.name)) continue;
    const file = path.join(entry.parentPath, entry.name);
    for (const match of fs.readFileSync(file, 'utf8').matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)) found.push({ file: path.relative(src, file), from: match[1]! });
  }
  return found;
}

describe('layering', () => {
  it('src/ui imports nothing from src/cli', () => {
    expect(imports(path.join(src, 'ui')).filter((i) => i.from.includes('/cli/'))).toEqual([]);
  });

  it('src/core imports no front end and no ink/react', () => {
    const bad = imports(path.join(src, 'core')).filter((i) => /\/(ui|cli|frontend)\/|^(ink|react)(\/|$)|^ink-/.test(i.from));
    expect(bad).toEqual([]);
  });

  it('src/frontend imports no ink and nothing from src/cli or src/ui', () => {
    const bad = imports(path.join(src, 'frontend')).filter((i) => /\/(ui|cli)\/|^(ink|react)(\/|$)|^ink-/.test(i.from));
    expect(bad).toEqual([]);
  });

  it('src/web reaches the team only through LeadControls: no board, mailbox, pipeline or session, no cli or ink', () => {
    const bad = imports(path.join(src, 'web')).filter((i) => /\/(ui|cli|frontend)\/|^(ink|react)(\/|$)|core\/board\/(board|mailbox|task-|pg\/)|core\/stages\/pipeline|core\/lead\/(session|board-lead)\.js/.test(i.from));
    expect(bad).toEqual([]);
    expect(imports(path.join(src, 'web')).length).toBeGreaterThan(10);
  });

  it('src/mcp-server imports nothing from src/cli or src/ui, and no ink', () => {
    const bad = imports(path.join(src, 'mcp-server')).filter((i) => /\/(ui|cli)\/|^(ink|react)(\/|$)|^ink-/.test(i.from));
    expect(bad).toEqual([]);
  });

  it("the front ends reach no part of the lead session: they use LeadApi's commands and queries", () => {
    const reaching: string[] = [];
    for (const dir of ['ui', 'frontend', 'cli', 'mcp-server']) {
      for (const entry of fs.readdirSync(path.join(src, dir), { withFileTypes: true, recursive: true })) {
        if (!entry.isFile() || !/\.tsx?$/.test(entry.name)) continue;
        const file = path.join(entry.parentPath, entry.name);
        for (const match of fs.readFileSync(file, 'utf8').matchAll(/session\.(mailbox|board|pipeline|watcher|trace|spend|requests|sink|log)\b/g)) reaching.push(`${path.relative(src, file)}: ${match[0]}`);
        // A front end is handed a LeadApi; only the commands that make a session name the class.
        if (/\bLeadSession\b/.test(fs.readFileSync(file, 'utf8')) && !/^cli\/((repl|run)-command|mcp-serve)\.ts$/.test(path.relative(src, file))) reaching.push(`${path.relative(src, file)}: LeadSession`);
      }
    }
    expect(reaching).toEqual([]);
  });
});
