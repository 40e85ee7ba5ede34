/**
 * The offline engineer's repertoire: small, real programs it can write for a requirement. A draft
 * leaves out the module docstring (the canonical run's defect, found by the real linter); fixes are
 * applied to the file as read back from the workspace.
 */

import { type Language, type OrganizerSpec, type ProgramKind } from './repertoire.js';

export interface Program {
  file: string;
  /** The clean program, header comment included. */
  content: string;
  /** The header (module docstring or leading comment) alone. */
  header: string;
  /** A command that exercises the program on a scratch folder inside the workspace. */
  tryCommand: string;
  /** Unit tests written beside the program; the reviewer's run_tests runs them instead of a smoke run. */
  tests?: { file: string; content: string };
}

/** The program of the repertoire for `kind`, in `language`, honouring the organizer's spec. */
export function buildProgram(kind: ProgramKind, language: Language, spec: OrganizerSpec): Program {
  if (kind === 'organizer') return language === 'python' ? pythonOrganizer(spec) : jsOrganizer(spec);
  return language === 'python' ? pythonWordCount() : jsWordCount();
}

const pyString = (text: string) => JSON.stringify(text);

const SCRATCH = 'rm -rf .scratch && mkdir -p .scratch && touch .scratch/photo.jpg .scratch/report.pdf .scratch/notes.txt .scratch/song.mp3 .scratch/backup.zip';

function pythonOrganizer(spec: OrganizerSpec): Program {
  const header = '"""Organize a folder (by default ~/Downloads) into subfolders by file type."""';
  const skipped = spec.warn
    ? ['            print(f"skipped {item.name}: {target.relative_to(folder)} already exists", file=sys.stderr)']
    : [];
  const conflict = {
    suffix: ['        target = unique_target(destination / item.name)'],
    skip: ['        target = destination / item.name', '        if target.exists():', ...skipped, '            continue'],
    overwrite: ['        target = destination / item.name'],
  }[spec.conflict];
  const body = [
    header,
    'import argparse',
    'import shutil',
    ...(spec.warn ? ['import sys'] : []),
    'from pathlib import Path',
    '',
    'CATEGORIES = {',
    ...spec.categories.map((c) => `    ${pyString(c.name)}: {${c.extensions.map(pyString).join(', ')}},`),
    '}',
    `FALLBACK = ${pyString(spec.fallback)}`,
    '',
    '',
    'def category_for(path):',
    '    """Return the folder name for a file, or FALLBACK when its type is unknown."""',
    '    suffix = path.suffix.lower()',
    '    for name, suffixes in CATEGORIES.items():',
    '        if suffix in suffixes:',
    '            return name',
    '    return FALLBACK',
    '',
    '',
    'def unique_target(target):',
    '    """Return a path that does not exist yet, adding (1), (2), ... before the extension."""',
    '    candidate = target',
    '    counter = 1',
    '    while candidate.exists():',
    '        candidate = target.with_name(f"{target.stem} ({counter}){target.suffix}")',
    '        counter += 1',
    '    return candidate',
    '',
    '',
    'def organize(folder, dry_run=False):',
    '    """Move each file at the top level of folder into its category folder."""',
    '    moved = []',
    '    for item in sorted(folder.iterdir()):',
    '        if not item.is_file() or item.name.startswith("."):',
    '            continue',
    '        destination = folder / category_for(item)',
    ...conflict,
    '        moved.append((item.name, target.relative_to(folder)))',
    '        if not dry_run:',
    '            destination.mkdir(exist_ok=True)',
    '            shutil.move(str(item), str(target))',
    '    return moved',
    '',
    '',
    'def main():',
    '    """Parse the command line and organize the folder."""',
    '    parser = argparse.ArgumentParser(description="Organize a folder into subfolders by file type.")',
    '    parser.add_argument("folder", nargs="?", default=str(Path.home() / "Downloads"))',
    '    parser.add_argument("--dry-run", action="store_true", help="only print what would move")',
    '    args = parser.parse_args()',
    '    folder = Path(args.folder).expanduser()',
    '    if not folder.is_dir():',
    '        parser.error(f"not a folder: {folder}")',
    '    for name, target in organize(folder, args.dry_run):',
    '        print(f"{name} -> {target}")',
    '',
    '',
    'if __name__ == "__main__":',
    '    main()',
    '',
  ];
  return {
    file: 'organize.py',
    content: body.join('\n'),
    header,
    tryCommand: `${SCRATCH} && python3 organize.py .scratch && find .scratch -type f | sort; status=$?; rm -rf .scratch; exit $status`,
  };
}

function jsOrganizer(spec: OrganizerSpec): Program {
  const header = '// Organize a folder (by default ~/Downloads) into subfolders by file type.';
  const skip = spec.warn
    ? ['    if (fs.existsSync(target)) {', '      console.error(`skipped ${entry.name}: ${path.relative(folder, target)} already exists`);', '      continue;', '    }']
    : ['    if (fs.existsSync(target)) continue;'];
  const conflict = {
    suffix: ['    const target = uniqueTarget(path.join(destination, entry.name));'],
    skip: ['    const target = path.join(destination, entry.name);', ...skip],
    overwrite: ['    const target = path.join(destination, entry.name);'],
  }[spec.conflict];
  const body = [
    header,
    "import fs from 'node:fs';",
    "import os from 'node:os';",
    "import path from 'node:path';",
    '',
    'const CATEGORIES = {',
    ...spec.categories.map((c) => `  ${JSON.stringify(c.name)}: [${c.extensions.map((e) => JSON.stringify(e)).join(', ')}],`),
    '};',
    `const FALLBACK = ${JSON.stringify(spec.fallback)};`,
    '',
    'export function categoryFor(name) {',
    '  const ext = path.extname(name).toLowerCase();',
    '  const found = Object.entries(CATEGORIES).find(([, exts]) => exts.includes(ext));',
    '  return found ? found[0] : FALLBACK;',
    '}',
    '',
    'function uniqueTarget(target) {',
    '  const { dir, name, ext } = path.parse(target);',
    '  let candidate = target;',
    '  for (let n = 1; fs.existsSync(candidate); n++) candidate = path.join(dir, `${name} (${n})${ext}`);',
    '  return candidate;',
    '}',
    '',
    'export function organize(folder, dryRun = false) {',
    '  const moved = [];',
    '  for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {',
    "    if (!entry.isFile() || entry.name.startsWith('.')) continue;",
    '    const destination = path.join(folder, categoryFor(entry.name));',
    ...conflict,
    '    moved.push([entry.name, path.relative(folder, target)]);',
    '    if (!dryRun) {',
    '      fs.mkdirSync(destination, { recursive: true });',
    '      fs.renameSync(path.join(folder, entry.name), target);',
    '    }',
    '  }',
    '  return moved;',
    '}',
    '',
    "const args = process.argv.slice(2).filter((arg) => arg !== '--dry-run');",
    "const folder = args[0] ?? path.join(os.homedir(), 'Downloads');",
    "for (const [name, target] of organize(folder, process.argv.includes('--dry-run'))) console.log(`${name} -> ${target}`);",
    '',
  ];
  return {
    file: 'organize.mjs',
    content: body.join('\n'),
    header,
    tryCommand: `${SCRATCH} && node organize.mjs .scratch && find .scratch -type f | sort; status=$?; rm -rf .scratch; exit $status`,
  };
}

const SAMPLE_TEXT = "printf 'one two three\\nfour five\\n' > .sample.txt";

function pythonWordCount(): Program {
  const header = '"""Count the lines, words and characters of a text file (or standard input)."""';
  const body = [
    header,
    'import argparse',
    'import sys',
    '',
    '',
    'def count(text):',
    '    """Return (lines, words, characters) for a piece of text."""',
    '    return len(text.splitlines()), len(text.split()), len(text)',
    '',
    '',
    'def main():',
    '    """Read the file (or stdin) and print its counts."""',
    '    parser = argparse.ArgumentParser(description="Count lines, words and characters.")',
    '    parser.add_argument("file", nargs="?", help="text file (default: standard input)")',
    '    args = parser.parse_args()',
    '    if args.file:',
    '        with open(args.file, encoding="utf-8", errors="replace") as handle:',
    '            text = handle.read()',
    '    else:',
    '        text = sys.stdin.read()',
    '    lines, words, chars = count(text)',
    '    print(f"lines: {lines}  words: {words}  characters: {chars}")',
    '',
    '',
    'if __name__ == "__main__":',
    '    main()',
    '',
  ];
  const tests = [
    '"""Tests for wordcount.py."""',
    'import unittest',
    '',
    'from wordcount import count',
    '',
    '',
    'class CountTest(unittest.TestCase):',
    '    """count() on small known texts."""',
    '',
    '    def test_two_lines(self):',
    '        """Lines, words and characters of a two-line text."""',
    '        self.assertEqual(count("one two three\\nfour five\\n"), (2, 5, 24))',
    '',
    '    def test_empty(self):',
    '        """An empty text has nothing in it."""',
    '        self.assertEqual(count(""), (0, 0, 0))',
    '',
    '',
    'if __name__ == "__main__":',
    '    unittest.main()',
    '',
  ];
  return {
    file: 'wordcount.py',
    content: body.join('\n'),
    header,
    tryCommand: `${SAMPLE_TEXT} && python3 wordcount.py .sample.txt && python3 -m unittest -q test_wordcount; status=$?; rm -f .sample.txt; exit $status`,
    tests: { file: 'test_wordcount.py', content: tests.join('\n') },
  };
}

function jsWordCount(): Program {
  const header = '// Count the lines, words and characters of a text file (or standard input).';
  const body = [
    header,
    "import fs from 'node:fs';",
    "import { pathToFileURL } from 'node:url';",
    '',
    'export function count(text) {',
    "  const lines = text === '' ? 0 : text.split('\\n').length - (text.endsWith('\\n') ? 1 : 0);",
    '  const words = text.split(/\\s+/).filter(Boolean).length;',
    '  return { lines, words, characters: text.length };',
    '}',
    '',
    '// Run as a program, not when imported by the tests.',
    'if (import.meta.url === pathToFileURL(process.argv[1] ?? \'\').href) {',
    "  const text = fs.readFileSync(process.argv[2] ?? 0, 'utf8');",
    '  const { lines, words, characters } = count(text);',
    '  console.log(`lines: ${lines}  words: ${words}  characters: ${characters}`);',
    '}',
    '',
  ];
  const tests = [
    '// Tests for wordcount.mjs.',
    "import assert from 'node:assert/strict';",
    "import { test } from 'node:test';",
    "import { count } from './wordcount.mjs';",
    '',
    "test('counts lines, words and characters', () => {",
    "  assert.deepEqual(count('one two three\\nfour five\\n'), { lines: 2, words: 5, characters: 24 });",
    '});',
    '',
    "test('an empty text has nothing in it', () => {",
    "  assert.deepEqual(count(''), { lines: 0, words: 0, characters: 0 });",
    '});',
    '',
  ];
  return {
    file: 'wordcount.mjs',
    content: body.join('\n'),
    header,
    tryCommand: `${SAMPLE_TEXT} && node wordcount.mjs .sample.txt && node --test; status=$?; rm -f .sample.txt; exit $status`,
    tests: { file: 'wordcount.test.mjs', content: tests.join('\n') },
  };
}

/** The first draft: the program without its header (docstring or leading comment). */
export function draftOf(program: Program): string {
  return program.content.replace(`${program.header}\n`, '');
}

/**
 * Applies the reviewer's issues to the file's real content. Returns null when none of the issues is
 * one it knows how to fix (the caller then rewrites the clean program).
 */
export function applyFixes(content: string, issues: readonly string[], program: Program): string | null {
  let fixed = content;
  const text = issues.join('\n').toLowerCase();
  let known = false;
  if (/docstring|leading comment/.test(text)) {
    known = true;
    if (!fixed.startsWith(program.header)) fixed = `${program.header}\n${fixed}`;
  }
  if (/trailing whitespace/.test(text)) {
    known = true;
    fixed = fixed.replace(/[ \t]+$/gm, '');
  }
  if (/\btab\b/.test(text)) {
    known = true;
    fixed = fixed.replace(/\t/g, '    ');
  }
  if (/bare 'except|bare except/.test(text)) {
    known = true;
    fixed = fixed.replace(/except\s*:/g, 'except Exception:');
  }
  return known ? fixed : null;
}
