import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editFileTool } from '../../src/core/tools/edit-file.js';
import { upsertFileArtifact } from '../../src/core/tools/files-artifact.js';
import { readFileTool } from '../../src/core/tools/read-file.js';
import { writeFileTool } from '../../src/core/tools/write-file.js';
import { call, makeToolContext, type TestContext } from './context.js';

let t: TestContext;
beforeEach(() => {
  t = makeToolContext({ maxOutputChars: 200 });
});
afterEach(() => t.cleanup());

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('write_file', () => {
  it('writes inside the workspace, creating folders, and records the file artifact', async () => {
    const outcome = await call(writeFileTool, { path: 'pkg/util.py', content: 'x = 1\n' }, t.ctx);
    expect(outcome).toEqual({ content: 'wrote pkg/util.py (6 bytes)' });
    expect(fs.readFileSync(path.join(t.workspace, 'pkg/util.py'), 'utf8')).toBe('x = 1\n');
    expect(t.records).toEqual([{ event: 'wrote', detail: 'pkg/util.py (6 bytes)' }]);
    expect(t.artifacts()).toEqual({
      requirements: { goal: 'kept untouched' },
      files: [{ path: 'pkg/util.py', sha256: sha('x = 1\n'), bytes: 6 }],
    });
  });

  it('replaces the entry of a rewritten path and keeps the others', async () => {
    await call(writeFileTool, { path: 'a.py', content: 'a' }, t.ctx);
    await call(writeFileTool, { path: 'b.py', content: 'b' }, t.ctx);
    await call(writeFileTool, { path: './a.py', content: 'a2' }, t.ctx);
    expect(t.artifacts().files).toEqual([
      { path: 'a.py', sha256: sha('a2'), bytes: 2 },
      { path: 'b.py', sha256: sha('b'), bytes: 1 },
    ]);
  });

  it('refuses paths outside the workspace as a tool error, writing nothing', async () => {
    for (const target of ['../escape.py', '/tmp/autoteam-escape.py']) {
      const outcome = await call(writeFileTool, { path: target, content: 'x' }, t.ctx);
      expect(outcome.isError).toBe(true);
      expect(outcome.content).toMatch(/Paths must stay inside the workspace/);
    }
    expect(fs.existsSync(path.join(t.root, 'escape.py'))).toBe(false);
    expect(fs.existsSync('/tmp/autoteam-escape.py')).toBe(false);
    expect(t.records).toEqual([]);
  });

  it('refuses to write through a symlink that points outside', async () => {
    const outside = path.join(t.root, 'outside');
    fs.mkdirSync(outside);
    fs.symlinkSync(outside, path.join(t.workspace, 'out'));
    const outcome = await call(writeFileTool, { path: 'out/x.py', content: 'x' }, t.ctx);
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toMatch(/symbolic link/);
    expect(fs.readdirSync(outside)).toEqual([]);
  });
});

describe('read_file', () => {
  it('returns the exact content and records nothing; a person sees the file and its length, not its first line', async () => {
    fs.writeFileSync(path.join(t.workspace, 'a.py'), 'print(1)\n');
    expect(await call(readFileTool, { path: 'a.py' }, t.ctx)).toEqual({ content: 'print(1)\n', display: 'a.py (1 line)' });
    fs.writeFileSync(path.join(t.workspace, 'b.py'), '<<<<<<< HEAD\nx = 1\n=======\nx = 2\n>>>>>>> theirs');
    expect((await call(readFileTool, { path: 'b.py' }, t.ctx)).display).toBe('b.py (5 lines)');
    expect(t.records).toEqual([]);
  });

  it('caps long files with a note', async () => {
    fs.writeFileSync(path.join(t.workspace, 'long.txt'), 'y'.repeat(1000));
    const outcome = await call(readFileTool, { path: 'long.txt' }, t.ctx);
    expect(outcome.content).toContain('…[800 more characters cut]…');
  });

  it('answers a missing file with the files that do exist', async () => {
    fs.writeFileSync(path.join(t.workspace, 'organize.py'), '');
    const outcome = await call(readFileTool, { path: 'organise.py' }, t.ctx);
    expect(outcome).toEqual({ isError: true, kind: 'error', content: "no such file 'organise.py' in the workspace. Files there: organize.py" });
  });

  it('does not offer, in a listing or a missing file\'s answer, what it would refuse to read (offLimits: the lead\'s .env)', async () => {
    fs.writeFileSync(path.join(t.workspace, '.env'), 'ANTHROPIC_API_KEY=x\n');
    fs.writeFileSync(path.join(t.workspace, 'notes.md'), '');
    const ctx = { ...t.ctx, offLimits: ['.env'] };
    expect(await call(readFileTool, { path: 'nonexistent.txt' }, ctx)).toMatchObject({ content: "no such file 'nonexistent.txt' in the workspace. Files there: notes.md" });
    expect(await call(readFileTool, { path: '.' }, ctx)).toMatchObject({ content: '. is a directory. Files: notes.md' });
    expect(await call(readFileTool, { path: '.env' }, ctx)).toMatchObject({ isError: true, kind: 'sandbox_denied' });
  });

  it('lists a directory and refuses escapes', async () => {
    fs.writeFileSync(path.join(t.workspace, 'a.py'), '');
    expect((await call(readFileTool, { path: '.' }, t.ctx)).content).toBe('. is a directory. Files: a.py');
    const outcome = await call(readFileTool, { path: '../../etc/passwd' }, t.ctx);
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toMatch(/must stay inside the workspace/);
  });
});

describe('edit_file', () => {
  beforeEach(() => fs.writeFileSync(path.join(t.workspace, 'a.py'), 'x = 1\ny = 1\nz = 2\n'));

  it('replaces exactly one match and updates the file artifact', async () => {
    const outcome = await call(editFileTool, { path: 'a.py', old_text: 'z = 2', new_text: 'z = $& 3' }, t.ctx);
    expect(outcome.isError).toBeUndefined();
    const content = fs.readFileSync(path.join(t.workspace, 'a.py'), 'utf8');
    expect(content).toBe('x = 1\ny = 1\nz = $& 3\n');
    expect(t.records).toEqual([{ event: 'edited', detail: `a.py (${content.length} bytes)` }]);
    expect(t.artifacts().files).toEqual([{ path: 'a.py', sha256: sha(content), bytes: content.length }]);
  });

  it('refuses zero or several matches, saying how many', async () => {
    const none = await call(editFileTool, { path: 'a.py', old_text: 'w = 9', new_text: '' }, t.ctx);
    expect(none).toMatchObject({ isError: true, content: expect.stringMatching(/not found in a\.py \(0 matches\)/) });
    const many = await call(editFileTool, { path: 'a.py', old_text: ' = 1', new_text: ' = 5' }, t.ctx);
    expect(many).toMatchObject({ isError: true, content: expect.stringMatching(/matches 2 places in a\.py/) });
    expect(fs.readFileSync(path.join(t.workspace, 'a.py'), 'utf8')).toBe('x = 1\ny = 1\nz = 2\n');
    expect(t.records).toEqual([]);
  });

  it('reports a missing file as a tool error', async () => {
    const outcome = await call(editFileTool, { path: 'nope.py', old_text: 'a', new_text: 'b' }, t.ctx);
    expect(outcome).toMatchObject({ isError: true, content: expect.stringMatching(/no such file 'nope.py'/) });
  });
});

describe('upsertFileArtifact', () => {
  it('tolerates a missing or malformed current value', () => {
    const entry = { path: 'a.py', sha256: 'x', bytes: 1 };
    expect(upsertFileArtifact(undefined, entry)).toEqual([entry]);
    expect(upsertFileArtifact(['junk', { path: 'b.py', sha256: 'y', bytes: 2 }], entry)).toEqual([{ path: 'b.py', sha256: 'y', bytes: 2 }, entry]);
  });
});
