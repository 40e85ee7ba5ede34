/**
 * Nothing in the runtime parses words the runtime wrote itself: exit reasons, inbox notes, task
 * statements, compaction logs and tool-argument errors travel as typed fields (events/schema.ts,
 * ModelRequest.context, ToolUseBlock.invalid). This test reads every source file and fails on a
 * pattern that matches one of those phrases, or on the old magic argument key.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return /\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/** Phrases the runtime writes for people and models; reading them back would be a hidden protocol. */
const RUNTIME_PHRASES = ['Task #', 'request_id', '[called', '[result', 'idle for', 'cannot use the board at', 'taken over', 'released #', 'retry in', 'went idle', 'no teammate finished it'];

/** Regex literals (whatever they are used for: a regex is for reading). */
const REGEX_LITERAL = /(?<![\w)\]$])\/((?:\\.|\[[^\]\n]*\]|[^/\n\\[])+)\/[dgimsuy]*/g;
/** The text a string test looks for: `.startsWith('…')`, `.includes("…")`, `new RegExp('…')`. */
const STRING_TEST = /(?:\.(?:startsWith|endsWith|includes|indexOf|search|match)|new RegExp)\(\s*(['"`])((?:\\.|(?!\1).)*)\1/g;

/** Whether `line` reads one of the runtime's phrases (regex escapes removed, so `\[called` counts). */
function readsPhrase(line: string): string | null {
  // Comments describe; they read nothing.
  if (/^\s*(\/\/|\/\*|\*)/.test(line)) return null;
  const read = [...line.matchAll(REGEX_LITERAL)].map((m) => m[1]!).concat([...line.matchAll(STRING_TEST)].map((m) => m[2]!));
  for (const text of read) {
    const plain = text.replace(/\\/g, '');
    const phrase = RUNTIME_PHRASES.find((candidate) => plain.includes(candidate));
    if (phrase) return phrase;
  }
  return null;
}

describe('no prose protocols', () => {
  it('no module reads back a phrase the runtime writes, or uses a magic key in tool arguments', () => {
    const offenders: string[] = [];
    for (const file of sources(src)) {
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      for (const [index, line] of lines.entries()) {
        if (/__autoteam_/.test(line)) offenders.push(`${path.relative(src, file)}:${index + 1}: magic key: ${line.trim()}`);
        const phrase = readsPhrase(line);
        if (phrase) offenders.push(`${path.relative(src, file)}:${index + 1}: reads '${phrase}': ${line.trim()}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the check itself catches a reader of runtime prose', () => {
    // The shapes the check must catch (each once was in the code).
    const samples = [
      "const TRANSCRIPT_CALL = /^(?:[A-Z]+: )?\\[called (\\S+) (\\{.*\\})\\]$/;",
      "if (exit.reason.startsWith('idle for')) resting.add(name);",
      'const shutdown = /shut down \\(request_id: ([A-Za-z0-9_-]+)\\)/.exec(latest);',
      "for (const block of blocks) if (block.text.startsWith('Task #')) return block.text;",
      "else if (/cannot use the board at/.test(exit.reason)) retry();",
    ];
    for (const sample of samples) expect(readsPhrase(sample), sample).not.toBeNull();
    // Writing a phrase is fine, even beside a string test of something else.
    expect(readsPhrase("return `Task #${task.id} failed: ${reason}`;")).toBeNull();
    expect(readsPhrase("super(`cannot use the board at ${url}${(e.message ?? '').includes(e.code) ? '' : e.code}`);")).toBeNull();
  });
});
