import fs from 'node:fs';
import path from 'node:path';
import { type Command, Option } from 'commander';
import type { Board } from '../core/board/board.js';
import type { Task } from '../core/board/schemas.js';
import { counted } from '../core/words.js';
import { describeUrl } from '../core/board/pg/url.js';
import { CONFIG_FILE, defaultProjectConfig, loadProjectConfig, type ProjectConfig } from '../core/config/project-config.js';
import { StageRegistry } from '../core/stages/stage-registry.js';
import { Pipeline } from '../core/stages/pipeline.js';
import { stageTools } from '../core/tools/registry.js';
import { diffPipeline, discardPipeline, type MergerOptions, mergePipeline } from '../core/lead/branches.js';
import { MergeWaitStopped } from '../core/lead/merge-site.js';
import { MergeQueue, recheckLimits } from '../core/lead/merge-queue.js';
import { leaderOf } from '../core/lead/board-lead.js';
import { pipelineStatus, tasksByPipeline } from '../core/stages/pipeline-status.js';
import { coveredBeside, rolesFrom, whoWorks } from './post-command.js';
import { isLive, runsNow } from '../core/board/team-registry.js';
import { goneReason } from '../core/board/liveness.js';
import { loadTeammateSettings, type TeammateSettings } from '../core/agent/settings.js';
import { cancelPipeline, pipelineId, retriedLine, taskId } from '../frontend/commands.js';
import { fitted, formatBoard, formatMember, WHO_ANSWERS } from '../frontend/format.js';
import { onStopSignals } from '../frontend/quit.js';
import { type PendingQuestion, questionsInLog, unansweredOnBoard } from '../core/lead/questions.js';
import { boardDir, boardOption, boardUrl, dirOption, existingBoardDir, openExisting, remoteOf, UsageError, warnOfBrokenConfig } from './board-options.js';

/**
 * A merge or discard by hand (`autoteam merge|discard <n>`): a wait for a drain under way is said as
 * it begins, and Ctrl+C ends that wait with its line (exit 130). Once it holds the queue the merge
 * finishes, Ctrl+C or not, since a merge is not left half-done; a second Ctrl+C quits at once
 * (onStopSignals: SIGTERM alike, a signal delivered twice at once taken once).
 */
async function byHand(act: (options: MergerOptions) => Promise<string>): Promise<string> {
  const stop = new AbortController();
  let waited = false;
  const off = onStopSignals(() => {
    stop.abort();
    // A wait under way ends with its own line; the merge itself is not left half-done.
    if (!waited) console.error('finishing the merge under way (Ctrl+C again to quit at once)');
  });
  const onLine = (line: string) => {
    waited = true;
    console.log(line);
  };
  try {
    return await act({ onLine, patient: true, signal: stop.signal });
  } catch (error) {
    if (!(error instanceof MergeWaitStopped)) throw error;
    process.exitCode = 130;
    return error.message;
  } finally {
    off();
  }
}

/**
 * The commands that look at or act on a board without running a team: tasks, team, show, the pipeline
 * commands (cancel, retry, diff, merge, discard), export, import, stages and init.
 */
export function registerBoardCommands(program: Command): void {
  program
    .command('tasks')
    .description('print the board: [ ] pending, [>] in progress, [x] completed, [!] failed, [-] cancelled')
    .addOption(dirOption())
    .addOption(boardOption())
    .option('--json', 'print the tasks as JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      // Reading a board never creates one.
      warnOfBrokenConfig(command);
      if (!boardUrl(command)) {
        const dir = existingBoardDir(command);
        if (!fs.existsSync(path.join(dir, '.tasks'))) {
          console.log(options.json ? '[]' : `No tasks (no .tasks/ in ${dir}).`);
          return;
        }
      }
      const board = await openExisting(command);
      try {
        const tasks = board.tasks.list();
        if (options.json) console.log(JSON.stringify(tasks, null, 2));
        else {
          const width = process.stdout.isTTY ? process.stdout.columns : undefined;
          console.log(formatBoard(tasks, width, width !== undefined));
          // A question waiting for the person holds its pipeline: said here too, where a worker asked it and no lead runs.
          for (const question of await waitingQuestions(board, tasks)) console.log(fitted(`? #${question.task} `, `${question.from} asks: ${question.question} — ${WHO_ANSWERS}`, width));
        }
        // Its task may be a pipeline's: that pipeline's totals above are short by what it spent.
        const totals = tasks.some((task) => task.pipeline !== null) ? " and from the pipelines' totals" : '';
        for (const problem of board.tasks.problems()) console.error(`skipped ${problem.message} (left out of the list${totals})`);
      } finally {
        await board.close();
      }
    });

  program
    .command('team')
    .description("print the team: each member's role and status as recorded, and the lead holding the board")
    .addOption(dirOption())
    .addOption(boardOption())
    .option('--json', 'print the team config as JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      warnOfBrokenConfig(command);
      if (!boardUrl(command)) {
        const dir = existingBoardDir(command);
        if (!fs.existsSync(path.join(dir, '.team', 'config.json'))) {
          console.log(options.json ? 'null' : `No team (no .team/config.json in ${dir}).`);
          return;
        }
      }
      const board = await openExisting(command);
      try {
        const config = board.registry.read();
        if (options.json) return void console.log(JSON.stringify(config, null, 2));
        const leader = leaderOf(board.lease().read());
        const lead = leader.state === 'none' ? 'no lead running' : `lead ${config.lead}: pid ${leader.pid}${leader.host ? ` on ${leader.host}` : ''}, since ${leader.since}`;
        const lines = [`team ${config.team} — ${lead}`];
        const nowMs = Date.now();
        for (const member of config.members) {
          // As recorded: which of the lead's teammates rest (it starts them again for work) only the lead knows.
          const gone = isLive(member) ? goneReason(member, nowMs) : null;
          lines.push(`  ${formatMember(member)}${gone ? ` (not running: ${gone})` : ''}`);
        }
        if (config.members.length === 0) lines.push('  no teammates');
        console.log(lines.join('\n'));
      } finally {
        await board.close();
      }
    });

  program
    .command('show')
    .description("print one task's JSON")
    .argument('<id>', 'task id')
    .addOption(dirOption())
    .addOption(boardOption())
    .action(async (id: string, _options: unknown, command: Command) => {
      // Read as /show reads it: digits (`#3` too), not whatever Number() takes (`0x3`, `3e0`).
      const n = taskId(id);
      warnOfBrokenConfig(command);
      const board = await openExisting(command);
      try {
        console.log(JSON.stringify(board.tasks.get(n), null, 2));
      } finally {
        await board.close();
      }
    });

  // One pipeline, by id: what the person does to it from any terminal (the REPL has the same as /commands).
  const pipelineCommands: Array<[string, string, (board: Board, id: number, command: Command) => Promise<string>]> = [
    ['cancel', "cancel a pipeline's open tasks; their owners stop", (board, id, command) => cancelPipeline(boardPipeline(board, command).pipelines, id, board.registry.read().lead)],
    ['retry', 'restart a failed or cancelled pipeline from the stage that failed', async (board, id, command) => {
      const { pipelines } = boardPipeline(board, command);
      const task = await pipelines.retry(id, board.registry.read().lead);
      // Who works it, as `post` says it: the lead holding the board, its live workers (of every role from the retried stage on), or nobody yet.
      const roles = rolesFrom(pipelines.stages, task.stage);
      const leader = leaderOf(board.lease().read());
      return `${retriedLine(id, task)}\n${whoWorks(leader, roles.length ? roles : task.role ? [task.role] : undefined, coveredBeside(board.registry, leader))}`;
    }],
    ['diff', "print a pipeline's branch: its files and diff against where it started", (board, id) => diffPipeline(board.tasks, id)],
    ['discard', "remove a pipeline's worktree and branch", (board, id) => byHand((options) => discardPipeline(board.tasks, id, board.registry.read().lead, options))],
  ];
  for (const [name, what, act] of pipelineCommands) {
    program
      .command(name)
      .description(what)
      .argument('<pipeline>', 'pipeline id')
      .addOption(dirOption())
      .addOption(boardOption())
      .action(async (id: string, _options: unknown, command: Command) => {
        const n = pipelineId(id);
        const board = await openExisting(command);
        try {
          console.log(await act(board, n, command));
        } finally {
          await board.close();
        }
      });
  }

  program
    .command('merge')
    .description("merge an approved pipeline's branch into your current branch, then remove its worktree and branch; --queue: merge every approved pipeline into its base, in approval order")
    .argument('[pipeline]', 'pipeline id')
    .option('--queue', 'drain the merge queue once: rebase, check again, fast-forward (a conflict or a failing check sends the pipeline back); one line per pipeline')
    .option('--remote <url>', "the remote pipelines' branches live on, as posted (config repository.remote): its full URL where the board shows it without credentials")
    .addOption(dirOption())
    .addOption(boardOption())
    .action(async (id: string | undefined, options: { queue?: boolean; remote?: string }, command: Command) => {
      if (Boolean(options.queue) && id !== undefined) throw new UsageError('merge takes a pipeline id, or --queue, not both');
      if (!options.queue && id === undefined) throw new UsageError('merge needs a pipeline id (autoteam merge 3), or --queue to merge every approved pipeline in approval order');
      if (!options.queue && options.remote !== undefined) throw new UsageError('--remote goes with --queue: a pipeline on a remote is merged by the queue, which pushes its base there');
      if (id?.toLowerCase() === 'all') throw new UsageError('merge all is autoteam merge --queue: every approved pipeline, in approval order');
      const n = id === undefined ? null : pipelineId(id);
      const board = await openExisting(command);
      try {
        if (n !== null) {
          console.log(await byHand((options) => mergePipeline(board.tasks, n, board.registry.read().lead, options)));
          return;
        }
        const { pipelines, project, settings } = boardPipeline(board, command);
        const remoteUrl = remoteOf(options, project);
        // Ctrl+C stops the drain at a safe point: the re-check under way is cut short and its pipeline
        // stays queued, said in its line with the rest; a second Ctrl+C quits at once.
        const stop = new AbortController();
        const off = onStopSignals(() => {
          stop.abort();
          console.error('stopping the merge queue at a safe point: what it has not merged stays queued (Ctrl+C again to quit at once)');
        });
        // Each pipeline's line as it is done: a drain stopped part-way has said what it did.
        const queue = new MergeQueue({ board, pipelines, by: board.registry.read().lead, limits: recheckLimits(settings), signal: stop.signal, onLine: (line) => console.log(line), ...(remoteUrl ? { remoteUrl } : {}) });
        try {
          await queue.drain();
        } finally {
          off();
        }
        if (stop.signal.aborted) {
          process.exitCode = 130;
          return;
        }
        // Exit 1 unless every pipeline this drain took merged: one that waits, was sent back or failed
        // to merge is a script's business. An empty queue asked nothing (0), also when a merger beside
        // this one emptied it first.
        await board.tasks.refresh();
        const outcome = (id: number) => board.tasks.list().find((task) => task.id === id)?.artifacts.outcome?.action;
        const taken = queue.handled;
        if (taken.some((entry) => outcome(entry.holder.id) !== 'merged')) process.exitCode = 1;
        // Sent back: a revision waits for an engineer, then a reviewer, and merges at a later drain once approved again.
        const byPipeline = tasksByPipeline(board.tasks.list());
        const sentBack = taken.filter((entry) => pipelineStatus(byPipeline.get(entry.pipeline) ?? []) === 'active');
        const leader = leaderOf(board.lease().read());
        if (sentBack.length) console.log(`${whoWorks(leader, ['engineer', 'reviewer'], coveredBeside(board.registry, leader))}; once approved again, autoteam merge --queue merges ${sentBack.length === 1 ? 'it' : 'them'}`);
      } finally {
        await board.close();
      }
    });

  program
    .command('export')
    .description('write a postgres:// board as files (.tasks/task_<id>.json, .team/…) into --dir, an empty folder')
    .addOption(dirOption())
    .addOption(boardOption())
    .action(async (_options: unknown, command: Command) => {
      const url = boardUrl(command);
      if (!url) throw new UsageError('export needs --board postgres://… (or AUTOTEAM_BOARD)');
      const dir = boardDir(command);
      const { exportBoard } = await import('../core/board/pg/transfer.js');
      const counts = await exportBoard(url, dir);
      console.log(`exported ${transferred(counts)} from ${describeUrl(url)} to ${dir}`);
    });

  program
    .command('import')
    .description('load the file board in --dir into an empty postgres:// board')
    .addOption(dirOption())
    .addOption(boardOption())
    .action(async (_options: unknown, command: Command) => {
      const url = boardUrl(command);
      if (!url) throw new UsageError('import needs --board postgres://… (or AUTOTEAM_BOARD)');
      const dir = existingBoardDir(command);
      const { importBoard } = await import('../core/board/pg/transfer.js');
      const counts = await importBoard(dir, url);
      console.log(`imported ${transferred(counts)} from ${dir} into ${describeUrl(url)}`);
    });

  program
    .command('stages')
    .description("print each stage's role, prompt, tools and transitions as configured (no model is called)")
    .option('--json', 'as JSON')
    .addOption(dirOption())
    .action((options: { json?: boolean }, command: Command) => {
      const project = loadProjectConfig(boardDir(command, false));
      const registry = StageRegistry.from(project.stages);
      const stages = registry.all().map(({ stage, role, title, systemPrompt, tools, transitions, rules }) => ({
        stage,
        role,
        title,
        systemPrompt,
        tools,
        transitions,
        offeredTools: stageTools(stage, registry).map((tool) => tool.name),
        rules,
      }));
      if (options.json) {
        console.log(JSON.stringify(stages, null, 2));
        return;
      }
      if (project.file) console.log(`(with ${project.file})\n`);
      for (const stage of stages) {
        console.log(`== ${stage.stage} (${stage.title}) — role: ${stage.role}`);
        console.log(stage.systemPrompt.replace(/^/gm, '   '));
        console.log(`   tools: ${stage.offeredTools.join(', ')}`);
        for (const [signal, transition] of Object.entries(stage.transitions)) {
          const label = transition.revise ? `${transition.next} (revision n+1, up to max_revisions; fails when not converging)` : transition.next;
          console.log(`   ${signal} → ${label}`);
        }
        for (const rule of stage.rules ?? []) console.log(`   ${rule}`);
        console.log('');
      }
    });

  program
    .command('init')
    .description(`write ${CONFIG_FILE} with the defaults (the team, stage prompts and tools, limits) into --dir`)
    .addOption(new Option('--dir <path>', `the folder ${CONFIG_FILE} is written to (default: the current directory)`))
    .action((_options: unknown, command: Command) => {
      const dir = boardDir(command);
      const file = path.join(dir, CONFIG_FILE);
      if (fs.existsSync(file)) throw new UsageError(`${file} already exists (remove it first to start over)`);
      fs.writeFileSync(file, `${JSON.stringify(defaultProjectConfig(), null, 2)}\n`);
      console.log(`wrote ${file}: the team, each stage's prompt and tools, and the limits as autoteam runs without it`);
    });
}

/**
 * The board's pipelines as the lead works them: what they do is in the board's log (a REPL shows a
 * cancel made here as its own), with the configured stages and limits and the person's hooks.
 */
function boardPipeline(board: Board, command: Command): { pipelines: Pipeline; project: ProjectConfig; settings: TeammateSettings } {
  const project = loadProjectConfig(boardDir(command, false));
  const stages = StageRegistry.from(project.stages);
  const settings = loadTeammateSettings({ ...project.limitsEnv, ...process.env }, {}, stages);
  const hooks = project.hooks && Object.keys(project.hooks).length ? { hooks: project.hooks } : {};
  return { pipelines: new Pipeline(board.tasks, board.mailbox, { events: board.sink, stages, maxRevisions: settings.runtime.maxRevisions, ...hooks }), project, settings };
}

/**
 * The questions someone waits for: asked on a task its asker still holds, and not answered on the log
 * (the board records an answer only once its asker reads it). The log is read only when there are some.
 */
async function waitingQuestions(board: Board, tasks: readonly Task[]): Promise<PendingQuestion[]> {
  // Its asker's process gone without a word (kill -9, no lead to reap it): nobody waits either.
  const live = new Set(board.registry.members().filter((member) => runsNow(member)).map((member) => member.name));
  const held = unansweredOnBoard(tasks).filter((question) => live.has(question.from) && tasks.some((task) => task.id === question.task && task.status === 'in_progress' && task.owner === question.from));
  const { answered } = await questionsInLog(board.log, held, 0);
  return held.filter((question) => !answered.has(question.questionId));
}

/** `5 tasks, 1 request, 0 messages, 40 events and 2 submitted files`: what an export or import moved. */
function transferred(counts: { tasks: number; requests: number; messages: number; events: number; files: number }): string {
  return `${counted(counts.tasks, 'task')}, ${counted(counts.requests, 'request')}, ${counted(counts.messages, 'message')}, ${counted(counts.events, 'event')} and ${counted(counts.files, 'submitted file')}`;
}
