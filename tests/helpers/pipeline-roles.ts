/**
 * A MessagesServer step that plays the whole team over the Messages API: it reads the request's
 * system prompt to know who is asking (analyst, engineer, reviewer, or the simulated user behind
 * `--auto`) and how far that conversation got, and answers with the tool_use blocks that drive the
 * canonical run: one clarifying question, save_requirement, complete; write_file, a bash check,
 * submit_for_review; run_linter + run_tests, then approve_code (or request_revision when the real
 * linter complains). Every reply is recorded with the request it answered.
 *
 * A request it cannot place throws, which the server answers with a non-retryable 500 and records
 * in `server.errors`: the test fails loudly instead of the team improvising.
 */
import type { RecordedRequest, ResponseBlockBody, ScriptStep } from './messages-server.js';
import { messageBody, textBlock, toolUseBlock } from './messages-server.js';

export type Player = 'analyst' | 'engineer' | 'reviewer' | 'user';

export const PLAYER_STAGE: Record<Exclude<Player, 'user'>, 'requirements' | 'implementation' | 'review'> = {
  analyst: 'requirements',
  engineer: 'implementation',
  reviewer: 'review',
};

export const CLEAN_ORGANIZER = [
  '"""Organize a folder into subfolders named after the file types it holds."""',
  'import shutil',
  'import sys',
  'from pathlib import Path',
  '',
  'KINDS = {".jpg": "Images", ".png": "Images", ".pdf": "Documents", ".txt": "Documents", ".zip": "Archives"}',
  '',
  '',
  'def organize(folder):',
  '    """Move every top-level file of folder into a subfolder for its type."""',
  '    for item in sorted(folder.iterdir()):',
  '        if item.is_file():',
  '            target = folder / KINDS.get(item.suffix.lower(), "Other")',
  '            target.mkdir(exist_ok=True)',
  '            shutil.move(str(item), str(target / item.name))',
  '            print(f"{item.name} -> {target.name}")',
  '',
  '',
  'if __name__ == "__main__":',
  '    organize(Path(sys.argv[1] if len(sys.argv) > 1 else Path.home() / "Downloads"))',
  '',
].join('\n');

export const USER_ANSWER = 'Organize ~/Downloads by default, and accept another folder as the first argument.';

/** The reviewer's check for AC1: run the submitted program on a scratch folder of its own. */
export const ORGANIZER_CHECK = [
  'import pathlib, subprocess, sys, tempfile',
  'with tempfile.TemporaryDirectory() as d:',
  '    pathlib.Path(d, "a.jpg").write_text("x")',
  '    pathlib.Path(d, "b.pdf").write_text("x")',
  '    subprocess.run([sys.executable, "organize.py", d], check=True)',
  '    ok = pathlib.Path(d, "Images", "a.jpg").is_file() and pathlib.Path(d, "Documents", "b.pdf").is_file()',
  '    print("sorted by type" if ok else "not sorted")',
  '    sys.exit(0 if ok else 1)',
].join('\n');

export interface PlayedTurn {
  player: Player;
  request: RecordedRequest;
  reply: ResponseBlockBody[];
}

/** Who sent the request, from its system prompt. */
export function playerOf(request: RecordedRequest): Player {
  const system = systemText(request);
  if (system.includes('requirements analyst')) return 'analyst';
  if (system.includes('You are the engineer')) return 'engineer';
  if (system.includes('code reviewer')) return 'reviewer';
  if (system.includes('You are the person who asked')) return 'user';
  throw new Error(`cannot tell who sent request #${request.index + 1}: system starts '${system.slice(0, 80)}'`);
}

export function systemText(request: RecordedRequest): string {
  const system: unknown = request.body?.system;
  if (typeof system === 'string') return system;
  if (Array.isArray(system)) return system.map((block: { text?: string }) => block.text ?? '').join('\n');
  return '';
}

type Message = { role: 'user' | 'assistant'; content: string | Array<Record<string, any>> };

/** The assistant turns of this conversation that used tools, in order. */
function toolTurns(messages: Message[]): Array<Array<Record<string, any>>> {
  return messages
    .filter((m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_use'))
    .map((m) => (m.content as Array<Record<string, any>>).filter((b) => b.type === 'tool_use'));
}

/** The tool_result blocks of the last user message. */
function lastResults(messages: Message[]): Array<Record<string, any>> {
  const last = messages.at(-1);
  return last && Array.isArray(last.content) ? last.content.filter((b) => b.type === 'tool_result') : [];
}

export class TeamPlayer {
  readonly turns: PlayedTurn[] = [];

  /** As many identical steps as the server may need; the test checks `turns`, not leftovers. */
  steps(count = 200): ScriptStep[] {
    return Array.from({ length: count }, () => (request: RecordedRequest) => {
      const player = playerOf(request);
      const reply = this.decide(player, (request.body?.messages ?? []) as Message[]);
      this.turns.push({ player, request, reply });
      return { status: 200, body: messageBody(reply, { usage: { inputTokens: 100, outputTokens: 20 } }) };
    });
  }

  of(player: Player): PlayedTurn[] {
    return this.turns.filter((turn) => turn.player === player);
  }

  private decide(player: Player, messages: Message[]): ResponseBlockBody[] {
    const done = toolTurns(messages).length;
    const results = lastResults(messages);
    switch (player) {
      case 'user':
        return [textBlock(USER_ANSWER)];
      case 'analyst':
        if (done === 0) return [toolUseBlock('ask_clarifying_question', { question: 'Which folder should it organize by default?' })];
        if (done === 1) {
          const answer = String(results[0]?.content ?? '');
          return [
            textBlock('Recording the requirements.'),
            toolUseBlock('save_requirement', { key: 'language', value: 'Python 3, standard library only' }),
            toolUseBlock('save_requirement', { key: 'folder', value: answer }),
            toolUseBlock('add_acceptance_criterion', { criterion: 'Each file is moved into a folder named after its type', verify: 'organize a scratch folder with a.jpg and b.pdf' }),
          ];
        }
        return [toolUseBlock('complete_requirements_analysis', { summary: 'Two requirements: language and folder.' })];
      case 'engineer':
        if (done === 0) return [toolUseBlock('write_file', { path: 'organize.py', content: CLEAN_ORGANIZER })];
        if (done === 1) return [toolUseBlock('bash', { command: 'env | sort; python3 -m py_compile organize.py && echo compiled' })];
        return [toolUseBlock('submit_for_review', { file: 'organize.py' })];
      case 'reviewer': {
        if (done === 0) {
          return [
            toolUseBlock('run_linter', { file: 'organize.py' }),
            toolUseBlock('run_tests', { file: 'organize.py' }),
            toolUseBlock('run_check', { code: ORGANIZER_CHECK, language: 'python' }),
          ];
        }
        const lint = String(results[0]?.content ?? '');
        const check = String(results[2]?.content ?? '');
        if (/no problems/.test(lint) && /^CHK1: PASS/.test(check)) {
          return [
            toolUseBlock('approve_code', {
              comment: 'Lint clean, the smoke run passes, and the check sorted a scratch folder by type.',
              criteria: [{ id: 'AC1', met: true, evidence: 'CHK1 passed: a.jpg went to Images/, b.pdf to Documents/' }],
            }),
          ];
        }
        return [toolUseBlock('request_revision', { issues: [{ text: lint.slice(0, 300), severity: 'major' }] })];
      }
    }
  }
}
