import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { TASK_STATUSES, type Task } from '../core/board/schemas.js';
import { roleCovered } from '../core/board/team-registry.js';
import type { LeadControls } from '../core/lead/lead-api.js';
import type { PendingQuestion } from '../core/lead/questions.js';
import type { PipelineState } from '../core/stages/pipeline.js';
import type { StageRegistry } from '../core/stages/stage-registry.js';
import { formatTaskLine, formatUsage } from '../frontend/format.js';
import { checkRequirement, MAX_REQUIREMENT_BYTES } from '../core/stages/requirement.js';
import { remoteNotice } from '../core/lead/post-work.js';
import { waitsForRole } from '../core/lead/who-takes.js';

export interface BoardToolsOptions {
  controls: LeadControls;
  stages: StageRegistry;
  /** The board's folder, for the commands that start a team on it. */
  dir: string;
  /** `--board <url>` when the board is in PostgreSQL (the commands need it too). */
  board?: string;
  /** `--no-worktree`: pipelines work in folders, asked for (a post beside pipelines on a remote is not said to). */
  folders?: boolean;
  now?: () => number;
}

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
const failure = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }], isError: true });

/** A tool's failure is a result the calling agent reads, never a protocol error. */
async function guarded(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (error) {
    return failure((error as Error).message ?? String(error));
  }
}

const PIPELINE = z.number().int().positive().describe('the pipeline number (pipeline #N)');

/** A question of the team as a calling agent reads it, with the `question_id` that answer_question takes. */
const questionView = (question: PendingQuestion) => ({ question_id: question.questionId, from: question.from, task: question.task, pipeline: question.pipeline, question: question.question });

/** A pipeline as a calling agent reads it: its status, the questions it waits on, each task, what it spent, its branch. */
function describePipeline(state: PipelineState, waiting: readonly PendingQuestion[] = []): string {
  // The approving task holds the commit; every task of the pipeline holds the branch.
  const git = (state.tasks.findLast((task) => task.artifacts.git?.commit) ?? state.tasks.find((task) => task.artifacts.git))?.artifacts.git;
  return JSON.stringify(
    {
      pipeline: state.id,
      status: state.status,
      ...(state.reason ? { reason: state.reason } : {}),
      ...(waiting.length ? { waiting_for_answer: waiting.map(questionView), next: 'answer with answer_question {"question_id": …, "answer": …}; the pipeline goes on once it is answered' } : {}),
      revisions: state.revisions,
      usage: formatUsage(state.usage),
      tasks: state.tasks.map((task) => ({ id: task.id, stage: task.stage, revision: task.revision, status: task.status, owner: task.owner, result: task.result })),
      ...(git ? { branch: git.branch, base: git.base, ...(git.commit ? { commit: git.commit } : {}) } : {}),
    },
    null,
    2,
  );
}

/**
 * Why a requirement posted now would not be worked, or null: no lead holds the board and no live
 * member of the first stage's role runs on it. The answer says how to start one.
 */
function noTeam(options: BoardToolsOptions, stage: string): string | null {
  const { controls, stages } = options;
  if (controls.leader().state !== 'none') return null;
  const role = stages.get(stage).role;
  const now = options.now?.() ?? Date.now();
  if (roleCovered(controls.snapshot().team.members, role, now)) return null;
  const where = options.board ? `--board ${options.board} --dir ${options.dir}` : `--dir ${options.dir}`;
  return [
    `No team is running on this board (no lead, and no live ${role}), so nobody would work the requirement. Start one first:`,
    `- a lead with the whole team, in a terminal: autoteam ${where}`,
    `- or a worker per role: autoteam worker --name ${role} --role ${role} ${where} (and the same for the other stages' roles)`,
    '- or run this MCP server with --team, which starts the default team in its own process.',
  ].join('\n');
}

/** The board's tools: post and follow requirements, answer the team's questions, and decide on pipelines. */
export function registerBoardTools(server: McpServer, options: BoardToolsOptions): void {
  const { controls, stages } = options;
  const starts = stages.startable();

  server.registerTool(
    'post_requirement',
    {
      description: `Posts a requirement to the team: it becomes a pipeline (${stages.names().join(' → ')}) that the team works while you wait. Needs a running team on the board. Returns the pipeline number; follow it with pipeline_status or the resource autoteam://task/<id>, and answer the team's questions with list_questions / answer_question.`,
      inputSchema: {
        // Its size and blankness are checkRequirement's, as for `autoteam post` and the web board: one limit, said in its words.
        requirement: z.string().describe(`what you want built, in plain words (at most ${MAX_REQUIREMENT_BYTES / 1024} KB)`),
        start_stage: z.string().optional().describe(`skip earlier stages: one of ${starts.join(', ')}`),
      },
    },
    ({ requirement, start_stage }) =>
      guarded(async () => {
        if (start_stage !== undefined && !starts.includes(start_stage)) return failure(`start_stage: '${start_stage}' is not one of ${starts.join(', ')}`);
        // The requirement's own faults (blank, too large) first: they hold whether a team runs or not.
        try {
          checkRequirement(requirement);
        } catch (error) {
          return failure(`requirement: ${(error as Error).message}`);
        }
        const why = noTeam(options, start_stage ?? stages.first.stage);
        if (why) return failure(why);
        const task = await controls.post(requirement, start_stage, 'an MCP client');
        // Posted where the other machines' teammates cannot reach it: said, as `autoteam post` says it.
        const snapshot = controls.snapshot();
        const beside = options.folders ? null : remoteNotice(snapshot.tasks, [task]);
        // A lead whose team lacks the first stage's role (started with --no-team): the post waits, said.
        const waits = waitsForRole(task, snapshot.team.members, controls.leader());
        const notes = [beside, waits].filter((note) => note !== null).map((note) => `\nNote: ${note}.`).join('');
        return text(`Posted pipeline #${task.pipeline}: task #${task.id} (${task.stage}) — ${task.subject}\nFollow it with pipeline_status {"pipeline": ${task.pipeline}} or the resource autoteam://task/${task.id}.${notes}`);
      }),
  );

  server.registerTool(
    'list_tasks',
    {
      description: 'Lists the tasks of the board, one line each: [status] #id: subject (stage) @owner.',
      inputSchema: { status: z.enum(TASK_STATUSES).optional().describe('only tasks in this status'), pipeline: PIPELINE.optional().describe('only the tasks of this pipeline') },
    },
    ({ status, pipeline }) =>
      guarded(async () => {
        const tasks = controls.snapshot().tasks.filter((task: Task) => (status === undefined || task.status === status) && (pipeline === undefined || task.pipeline === pipeline));
        return text(tasks.length ? tasks.map((task) => formatTaskLine(task, 160)).join('\n') : 'No tasks match.');
      }),
  );

  server.registerTool(
    'get_task',
    { description: 'One task of the board in full, as JSON (its description, handoff, artifacts and history).', inputSchema: { id: z.number().int().positive().describe('the task number (#id)') } },
    ({ id }) =>
      guarded(async () => {
        const task = controls.task(id);
        return task ? text(JSON.stringify(task, null, 2)) : failure(`No task #${id} on this board.`);
      }),
  );

  server.registerTool(
    'pipeline_status',
    {
      description: "A pipeline's status (active, approved, failed, cancelled), its tasks, what it spent, its branch, and the team's questions it waits on (waiting_for_answer). With wait_seconds, waits up to that long for it to end, or for a question of the team to need your answer, first.",
      inputSchema: { pipeline: PIPELINE, wait_seconds: z.number().int().min(0).max(600).optional().describe('wait up to this long for the pipeline to be approved, failed or cancelled, or to wait on an answer') },
    },
    ({ pipeline, wait_seconds }, extra) =>
      guarded(async () => {
        const { tasks, autoAnswer: auto } = controls.snapshot();
        if (!tasks.some((task) => task.pipeline === pipeline)) return failure(`No pipeline #${pipeline} on this board.`);
        // Questions the caller is to answer: none while a simulated user answers them (--team --auto).
        const asked = () => (auto ? [] : controls.pendingQuestions().filter((question) => question.pipeline === pipeline));
        const described = () => text(describePipeline(controls.stateOf(pipeline), asked()));
        // A pipeline waiting on an answer goes no further while the caller waits: said at once.
        if (!wait_seconds || asked().length > 0) return described();
        // A client that asked for progress hears each step (and its own timeout can start again).
        const token = extra._meta?.progressToken;
        let step = 0;
        let said = '';
        const stop = token === undefined ? () => undefined : controls.subscribe((event) => {
          if (event.type !== 'team' || event.event.pipeline !== pipeline || !['task_claimed', 'task_completed', 'task_posted'].includes(event.event.type)) return;
          const now = controls.stateOf(pipeline).tasks.at(-1);
          const message = now ? `#${now.id} ${now.stage ?? 'task'}: ${now.status}` : 'working';
          // A completion and the post it leads to both find the new task pending: said once.
          if (message === said) return;
          said = message;
          void extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: ++step, message } }).catch(() => undefined);
        });
        // A timer of its own, not AbortSignal.timeout: on Node 20 a timeout signal that only
        // AbortSignal.any holds can be collected before it fires, and the call never answered.
        const waited = new AbortController();
        const timer = setTimeout(() => waited.abort(), wait_seconds * 1000);
        const unasked = controls.subscribe((event) => {
          if (event.type === 'question' && event.question.pipeline === pipeline && asked().length > 0) waited.abort();
        });
        try {
          await controls.waitForPipeline(pipeline, AbortSignal.any([waited.signal, extra.signal]));
          return described();
        } finally {
          clearTimeout(timer);
          unasked();
          stop();
        }
      }),
  );

  server.registerTool(
    'list_questions',
    { description: "The team's questions waiting for an answer (an analyst asking what the requirement leaves open), each with its question_id." },
    () =>
      guarded(async () => {
        const questions = controls.pendingQuestions();
        if (questions.length === 0) return text('No question is waiting for an answer.');
        return text(JSON.stringify(questions.map(questionView), null, 2));
      }),
  );

  server.registerTool(
    'answer_question',
    { description: "Answers one of the team's questions (the oldest when question_id is left out).", inputSchema: { answer: z.string().min(1).describe('your answer'), question_id: z.string().optional().describe('from list_questions') } },
    ({ answer, question_id }) =>
      guarded(async () => {
        const question = await controls.answer(answer, question_id);
        return text(`Answered ${question.from}'s question ${question.questionId}: ${question.question}`);
      }),
  );

  server.registerTool(
    'cancel_pipeline',
    { description: 'Cancels a pipeline: its open tasks are cancelled and whoever works them stops.', inputSchema: { pipeline: PIPELINE, reason: z.string().optional() } },
    ({ pipeline, reason }) =>
      guarded(async () => {
        const cancelled = await controls.cancel(pipeline, reason);
        return text(cancelled.length ? `Cancelled pipeline #${pipeline}: task${cancelled.length === 1 ? '' : 's'} ${cancelled.map((id) => `#${id}`).join(', ')}.` : `Pipeline #${pipeline} was already cancelled: nothing to do.`);
      }),
  );

  server.registerTool('retry_pipeline', { description: 'Retries a failed or cancelled pipeline from the stage that stopped.', inputSchema: { pipeline: PIPELINE } }, ({ pipeline }) =>
    guarded(async () => {
      const task = await controls.retry(pipeline);
      return text(`Retried pipeline #${pipeline}: task #${task.id} (${task.stage}) — ${task.subject}`);
    }),
  );

  server.registerTool('diff_pipeline', { description: "A pipeline's change on the repository: its branch, files and diff against the commit it started from.", inputSchema: { pipeline: PIPELINE } }, ({ pipeline }) =>
    guarded(async () => text(await controls.diff(pipeline))),
  );

  server.registerTool('merge_pipeline', { description: "Merges an approved pipeline's branch into the repository's current branch, then removes its worktree and branch.", inputSchema: { pipeline: PIPELINE } }, ({ pipeline }) =>
    guarded(async () => text(await controls.merge(pipeline))),
  );
}

/** The tools' names, in the order they are registered. */
export const BOARD_TOOLS = ['post_requirement', 'list_tasks', 'get_task', 'pipeline_status', 'list_questions', 'answer_question', 'cancel_pipeline', 'retry_pipeline', 'diff_pipeline', 'merge_pipeline'] as const;
