import type { Criterion } from '../../board/artifacts.js';
import { type ConflictPolicy, type OrganizerSpec, parseCategories, type ProgramKind } from './repertoire.js';

/**
 * The offline reviewer's checks: for each acceptance criterion it knows how to test, a Python script
 * that runs the submitted program on a scratch folder of its own and exits 1 when the criterion does
 * not hold. The checks read the criteria, not the engineer's code.
 */

export interface CheckPlan {
  criterion: string;
  code: string;
}

const py = (value: unknown) => JSON.stringify(value);

function command(file: string): string[] {
  return file.endsWith('.py') ? ['python3', file] : ['node', file];
}

const PRELUDE = (file: string) =>
  [
    `"""Check for ${file}."""`,
    'import pathlib',
    'import subprocess',
    'import sys',
    'import tempfile',
    '',
    `PROGRAM = ${py(command(file))}`,
    '',
    '',
    'def run(*args, stdin=None):',
    '    """Run the program; print and return what it did."""',
    '    result = subprocess.run(PROGRAM + list(args), input=stdin, capture_output=True, text=True, timeout=20)',
    '    print(f"$ {\' \'.join(PROGRAM + list(args))} -> exit {result.returncode}")',
    '    if result.stdout.strip():',
    '        print(result.stdout.strip()[:800])',
    '    if result.stderr.strip():',
    '        print("stderr:", result.stderr.strip()[:800])',
    '    return result',
    '',
    '',
    'def verdict(problems, shown):',
    '    """Exit 1 with the problems, or 0 saying what was shown."""',
    '    if problems:',
    '        print("FAILED: " + "; ".join(problems))',
    '        sys.exit(1)',
    '    print("OK: " + shown)',
    '',
    '',
  ].join('\n');

/** With `exact`, no folder beyond the expected ones may appear. */
function categoriesCheck(file: string, spec: Pick<OrganizerSpec, 'categories' | 'fallback'>, exact = true): string {
  // One sample of every extension the criterion names: a folder that takes only some of them fails.
  const expect: Record<string, string> = {};
  spec.categories.forEach((category, index) => {
    for (const ext of category.extensions) expect[`sample${index + 1}${ext}`] = category.name;
  });
  expect['unknown.xyz123'] = spec.fallback;
  return `${PRELUDE(file)}EXPECT = ${py(expect)}
with tempfile.TemporaryDirectory() as scratch:
    root = pathlib.Path(scratch)
    for name in EXPECT:
        (root / name).write_text("sample")
    result = run(scratch)
    problems = [] if result.returncode == 0 else [f"exit {result.returncode}"]
    for name, folder in EXPECT.items():
        if not (root / folder / name).is_file():
            problems.append(f"{name} is not in {folder}/")
    folders = sorted(p.name for p in root.iterdir() if p.is_dir())
    print("folders:", ", ".join(folders))
    extra = sorted(set(folders) - set(EXPECT.values()))
    if extra and ${exact ? 'True' : 'False'}:
        problems.append("unexpected folders: " + ", ".join(extra))
    verdict(problems, "each sample file is in its folder: " + ", ".join(f"{n} -> {f}/" for n, f in EXPECT.items()))
`;
}

function conflictCheck(file: string, spec: Pick<OrganizerSpec, 'categories'>, policy: ConflictPolicy, warn: boolean): string {
  const category = spec.categories[0]!;
  const name = `report${category.extensions[0]}`;
  return `${PRELUDE(file)}NAME = ${py(name)}
FOLDER = ${py(category.name)}
with tempfile.TemporaryDirectory() as scratch:
    root = pathlib.Path(scratch)
    (root / FOLDER).mkdir()
    (root / FOLDER / NAME).write_text("old")
    (root / NAME).write_text("new")
    result = run(scratch)
    problems = [] if result.returncode == 0 else [f"exit {result.returncode}"]
    kept = (root / FOLDER / NAME).read_text() if (root / FOLDER / NAME).exists() else None
    print("target folder:", ", ".join(sorted(p.name for p in (root / FOLDER).iterdir())))
    policy = ${py(policy)}
    if policy == "suffix":
        if kept != "old":
            problems.append(f"the existing {FOLDER}/{NAME} was overwritten")
        numbered = [p for p in (root / FOLDER).iterdir() if p.name != NAME and "(1)" in p.name]
        if not numbered or numbered[0].read_text() != "new":
            problems.append("the new file is not kept under a numbered name like 'report (1)'")
    elif policy == "skip":
        if kept != "old":
            problems.append(f"the existing {FOLDER}/{NAME} was overwritten")
        if not (root / NAME).exists():
            problems.append(f"{NAME} was moved although its name exists in {FOLDER}/")
        if ${warn ? 'True' : 'False'} and NAME not in result.stdout + result.stderr:
            problems.append(f"no warning names the skipped {NAME}")
    elif kept != "new":
        problems.append(f"{FOLDER}/{NAME} was not replaced by the new file")
    verdict(problems, f"with {FOLDER}/{NAME} already there, the {policy} rule held")
`;
}

function dryRunCheck(file: string): string {
  return `${PRELUDE(file)}with tempfile.TemporaryDirectory() as scratch:
    root = pathlib.Path(scratch)
    for name in ["photo.jpg", "report.pdf", "song.mp3"]:
        (root / name).write_text("sample")
    result = run(scratch, "--dry-run")
    problems = [] if result.returncode == 0 else [f"exit {result.returncode}"]
    left = sorted(p.name for p in root.iterdir())
    print("after --dry-run:", ", ".join(left))
    if left != ["photo.jpg", "report.pdf", "song.mp3"]:
        problems.append("--dry-run changed the folder")
    if "photo.jpg" not in result.stdout:
        problems.append("--dry-run did not print what would move")
    verdict(problems, "--dry-run printed the moves and left every file in place")
`;
}

function countsCheck(file: string, viaStdin: boolean): string {
  return `${PRELUDE(file)}import re

TEXT = "one two three\\nfour five\\n"
with tempfile.TemporaryDirectory() as scratch:
    sample = pathlib.Path(scratch) / "sample.txt"
    sample.write_text(TEXT)
    result = run(stdin=TEXT) if ${viaStdin ? 'True' : 'False'} else run(str(sample))
    problems = [] if result.returncode == 0 else [f"exit {result.returncode}"]
    if not re.search(r"\\b2\\b.*\\b5\\b.*\\b24\\b", result.stdout.replace("\\n", " ")):
        problems.append("expected 2 lines, 5 words and 24 characters in that order")
    verdict(problems, "2 lines, 5 words and 24 characters" + (" from standard input" if ${viaStdin ? 'True' : 'False'} else " from the file"))
`;
}

function conflictOf(text: string): { policy: ConflictPolicy; warn: boolean } | null {
  if (/numbered name/.test(text)) return { policy: 'suffix', warn: false };
  if (/left where it is/.test(text)) return { policy: 'skip', warn: /warning/.test(text) };
  if (/replaces it/.test(text)) return { policy: 'overwrite', warn: false };
  return null;
}

/**
 * The checks that test `criterion` for a program of `kind` in `file`, or null when the offline
 * reviewer has no way to test it. A criterion that restates the whole requirement (a pipeline that
 * skipped the analyst) is tested with every standard check of the kind.
 */
export function checksFor(criterion: Criterion, kind: ProgramKind, file: string, all: readonly Criterion[]): string[] | null {
  const text = criterion.criterion;
  if (kind === 'organizer') {
    const categories = parseCategories(text);
    if (/folder for its type/.test(text) && categories) return [categoriesCheck(file, categories)];
    const conflict = conflictOf(text);
    if (/already exists in the target folder/.test(text) && conflict) {
      const named = all.map((c) => parseCategories(c.criterion)).find(Boolean);
      return [conflictCheck(file, named ?? { categories: [{ name: 'Documents', extensions: ['.pdf'] }] }, conflict.policy, conflict.warn)];
    }
    if (/--dry-run/.test(text)) return [dryRunCheck(file)];
    if (/^The program does what was asked/.test(text)) {
      const common = { categories: [{ name: 'Images', extensions: ['.jpg'] }, { name: 'Documents', extensions: ['.pdf'] }], fallback: 'Other' };
      return [categoriesCheck(file, common, false), dryRunCheck(file)];
    }
    return null;
  }
  if (/standard input/.test(text)) return [countsCheck(file, true)];
  if (/counts of the file/.test(text) || /^The program does what was asked/.test(text)) return [countsCheck(file, false)];
  return null;
}
