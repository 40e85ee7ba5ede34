/**
 * The repository's AGENTS.md in a whole `autoteam run` on a git repository (the built CLI, the
 * offline team, `--record` to see each request): every stage's system prompt opens with it, ahead
 * of the stage's own, and the event log says which files each teammate used; `--no-agents-md`
 * leaves it out of every request and the log.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TeamEvent } from '../../src/core/events/schema.js';
import { STAGE_DEFINITIONS } from '../../src/core/stages/definitions.js';
import { type CliResult, DOWNLOADS_REQUIREMENT, describeRun, runCli, tempBoard } from '../helpers/pipeline-cli.js';

const python = spawnSync('python3', ['--version']).status === 0;
const RULES = 'House rule from AGENTS.md: name every script in lower case with underscores.';
const roots: string[] = [];

function repository(): string {
  const repo = tempBoard('autoteam-agents-md-');
  roots.push(repo);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: { ...process.env, GIT_AUTHOR_NAME: 'P', GIT_AUTHOR_EMAIL: 'p@x', GIT_COMMITTER_NAME: 'P', GIT_COMMITTER_EMAIL: 'p@x' } });
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(repo, 'AGENTS.md'), `${RULES}\n`);
  git('add', 'AGENTS.md');
  git('commit', '-q', '-m', 'Instructions for agents');
  return repo;
}

/** The system prompt of every recorded request, by role, in the order of the files. */
function systems(dir: string): Array<{ role: string; system: string }> {
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.json') && /\.work\./.test(name))
    .sort()
    .map((name) => {
      const call = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as { request: { system: string; agent: { role: string } } };
      return { role: call.request.agent.role, system: call.request.system };
    });
}

function events(repo: string): TeamEvent[] {
  return fs.readFileSync(path.join(repo, '.team', 'events.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as TeamEvent);
}

afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

describe.runIf(python)("the repository's AGENTS.md in autoteam run", () => {
  let on = { repo: '', run: null as unknown as CliResult };
  let off = { repo: '', run: null as unknown as CliResult };

  beforeAll(async () => {
    const runIn = async (extra: string[]) => {
      const repo = repository();
      const run = await runCli(['run', '--auto', '--record', path.join(repo, '.recording'), ...extra, DOWNLOADS_REQUIREMENT], { cwd: repo });
      return { repo, run };
    };
    on = await runIn([]);
    off = await runIn(['--no-agents-md']);
  });

  it('opens every stage\'s instructions with it, marked as the repository\'s, ahead of the stage prompt', () => {
    expect(on.run.code, describeRun(on.run)).toBe(0);
    const calls = systems(path.join(on.repo, '.recording'));
    expect(new Set(calls.map((call) => call.role))).toEqual(new Set(['analyst', 'engineer', 'reviewer']));
    for (const { role, system } of calls) {
      expect(system.startsWith('<repository-instructions>\n'), role).toBe(true);
      expect(system).toContain(`<file path="AGENTS.md">\n${RULES}\n</file>`);
      const stage = Object.values(STAGE_DEFINITIONS).find((definition) => definition.role === role)!;
      expect(system.indexOf('</repository-instructions>')).toBeLessThan(system.indexOf(stage.systemPrompt));
    }
  });

  it('records which files each teammate used, once per task', () => {
    const log = events(on.repo);
    const claimed = [...new Set(log.flatMap((event) => (event.type === 'task_claimed' ? [`${event.agent}#${event.task}`] : [])))];
    const used = log.flatMap((event) => (event.type === 'repository_instructions' ? [`${event.agent}#${event.task}:${event.files.map((file) => file.path).join(',')}`] : []));
    // Every task of the pipeline (the offline reviewer sends one revision back), each once.
    expect(claimed.length).toBeGreaterThanOrEqual(3);
    expect(used).toEqual(claimed.map((task) => `${task}:AGENTS.md`));
  });

  it('--no-agents-md leaves it out of every request and the log', () => {
    expect(off.run.code, describeRun(off.run)).toBe(0);
    const calls = systems(path.join(off.repo, '.recording'));
    expect(calls.length).toBeGreaterThan(0);
    for (const { system } of calls) expect(system).not.toContain(RULES);
    expect(events(off.repo).filter((event) => event.type === 'repository_instructions')).toEqual([]);
  });
});
