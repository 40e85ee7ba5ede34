import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertBuilt, CLI } from '../helpers/repl-cli.js';
import { readTasks, tempBoard, waitUntil } from '../helpers/repl-session.js';
import { TmuxScreen, tmuxPath } from '../helpers/repl-tmux.js';

const REQUIREMENT = 'Write a Python script that organizes my Downloads folder by file type.';
const tmux = tmuxPath();
const screens: TmuxScreen[] = [];

afterEach(() => {
  for (const screen of screens.splice(0)) screen.kill();
});

function open(): TmuxScreen {
  assertBuilt();
  const screen = new TmuxScreen(tempBoard('autoteam-repl-tty-'));
  screens.push(screen);
  screen.start(['node', CLI, '--dir', screen.dir, '--auto']);
  return screen;
}

describe.skipIf(!tmux)(`autoteam REPL in a real terminal (tmux${tmux ? '' : ' is not installed: skipped'})`, () => {
  it('takes a requirement to an approved pipeline, answers /tasks /team /inbox, and quits cleanly', async () => {
    const screen = open();
    await screen.waitFor(/reviewer \(reviewer\) idle/, 'the team to start', 30_000);
    expect(screen.capture()).toContain('model: offline scripted model — set ANTHROPIC_API_KEY or OPENAI_API_KEY for a real model');

    screen.type(REQUIREMENT);
    // Live: somebody claims a stage while the board panel shows it in progress.
    await screen.waitFor(/\[>\] #\d+: .*@(analyst|engineer|reviewer)/, 'a claimed task on the board panel');
    const approved = await screen.waitFor('pipeline #1 approved', 'the pipeline to be approved', 90_000);
    fs.writeFileSync(path.join(screen.dir, 'screen.txt'), approved);
    expect(approved).toMatch(/\[x\] #5: Review organize\.py \(revision 1\) \(review r1\) @reviewer/);
    // The board panel reads the board; the log lines come from the event stream, which may
    // be a moment behind it: wait for the reviewer's verdict to reach the log as well.
    const log = await screen.waitFor('[reviewer] approve_code: Code approved.', 'the verdict in the log', 30_000, true);
    expect(log).toMatch(/\? analyst asks \(pipeline #1\): /);
    expect(log).toMatch(/! simulated user answers analyst: /);
    expect(log).toContain('[engineer] claimed #2');

    screen.type('/tasks');
    await screen.waitFor(/› \/tasks\n\[x\] #1: Analyse: .*\(requirements\) @analyst/, '/tasks output', 10_000, true);
    screen.type('/team');
    // Members are listed in the order they joined, which the threads decide.
    // Each line ends with what the teammate spent (tokens only on the offline model); the lead's own
    // call, which posted the requirement, is its own and in the total.
    await screen.waitFor(/› \/team\nteam \S+ — lead: lead \[\d+(?:\.\d)?k tok\] · spent \d+(\.\d)?k tok\n(( {2}(analyst|engineer|reviewer) \(\4\): idle — looking for work \[\d+(\.\d)?k tok\])\n){3}/, '/team output', 10_000, true);
    screen.type('/inbox');
    await screen.waitFor(/› \/inbox\nInbox:\n {2}reviewer \[pipeline_update\]: Pipeline #1 approved/, '/inbox output', 10_000, true);

    screen.type('/quit');
    expect(await screen.exitCode()).toBe(0);
    const last = screen.capture(true);
    expect(last).toContain('reviewer: shut down');
    expect(last).toContain('bye');
    expect(readTasks(screen.dir).filter((task) => task.status === 'in_progress')).toEqual([]);
    const team = JSON.parse(fs.readFileSync(path.join(screen.dir, '.team', 'config.json'), 'utf8')) as { members: Array<{ status: string }> };
    expect(team.members.map((member) => member.status)).toEqual(['shutdown', 'shutdown', 'shutdown']);
  });

  it('draws in colour, with the cursor shown, live, in a terminal whose environment says CI', async () => {
    assertBuilt();
    const screen = new TmuxScreen(tempBoard('autoteam-repl-tty-'));
    screens.push(screen);
    // The other tests' terminals are told FORCE_COLOR=0 (offlineEnv); this one is a person's.
    screen.start(['env', '-u', 'FORCE_COLOR', 'CI=true', 'CONTINUOUS_INTEGRATION=1', 'node', CLI, '--dir', screen.dir, '--auto']);
    // Live frames: the team's start is drawn while the REPL runs, not only in the last frame at exit.
    await screen.waitFor(/reviewer \(reviewer\) idle/, 'the team to start', 30_000);
    screen.type('abc', false);
    screen.key('Left');
    await screen.waitFor(/› abc/, 'the typed text at the prompt');
    // The prompt is green and bold, and the cursor (ink draws its own, inverse) stands on the c.
    const styled = await waitUntil(() => {
      const now = screen.captureStyled();
      return /\x1b\[[0-9;]*7m.*c/.test(now) ? now : null;
    }, 'the cursor drawn at the prompt');
    expect(styled).toMatch(/\x1b\[[0-9;]*32m.*›/);
    screen.key('C-u');
    screen.type('/quit');
    expect(await screen.exitCode()).toBe(0);
  });

  it('keeps a pasted block of lines at the prompt until Enter, then posts it as one requirement', async () => {
    assertBuilt();
    const screen = new TmuxScreen(tempBoard('autoteam-repl-tty-'));
    screens.push(screen);
    screen.start(['node', CLI, '--dir', screen.dir, '--no-team']);
    await screen.waitFor('a requirement for the lead, or /help', 'the prompt', 30_000);
    screen.paste('/post Write a Python script\nthat organizes my Downloads folder by file type.\n');
    await screen.waitFor(/› \/post Write a Python script\n {2}that organizes my Downloads folder by file type\./, 'the paste at the prompt');
    expect(screen.capture(true)).not.toContain('posted pipeline');
    screen.key('Enter');
    await screen.waitFor(/posted pipeline #1: task #1 \(requirements\) — Analyse: Write a Python script/, 'the requirement posted', 20_000, true);
    expect(readTasks(screen.dir).map((task) => task.description)).toEqual(['Write a Python script\nthat organizes my Downloads folder by file type.']);
    screen.type('/quit');
    expect(await screen.exitCode()).toBe(0);
  });

  it('quits on Ctrl+C in the middle of work and leaves no task in progress', async () => {
    const screen = open();
    await screen.waitFor(/reviewer \(reviewer\) idle/, 'the team to start', 30_000);
    screen.type(`/post ${REQUIREMENT}`);
    await screen.waitFor(/\[>\] #\d+: /, 'a task in progress');
    screen.key('C-c');
    expect(await screen.exitCode()).toBe(0);
    expect(screen.capture(true)).toContain('bye');
    expect(readTasks(screen.dir).filter((task) => task.status === 'in_progress')).toEqual([]);
    // The last frame, left on the screen, shows the board and team as the shutdown left them.
    const last = screen.capture();
    expect(last).not.toMatch(/\[>\] #\d+: /);
    expect(last).toMatch(/reviewer \(reviewer\) shutdown/);
  });

  it('leaves no question box in its last frame when it quits while the analyst waits for an answer', async () => {
    assertBuilt();
    const screen = new TmuxScreen(tempBoard('autoteam-repl-tty-'));
    screens.push(screen);
    screen.start(['node', CLI, '--dir', screen.dir]);
    await screen.waitFor(/reviewer \(reviewer\) idle/, 'the team to start', 30_000);
    screen.type(`/post ${REQUIREMENT}`);
    await screen.waitFor('type the answer and press Enter', 'the question box');
    screen.key('C-c');
    expect(await screen.exitCode()).toBe(0);
    const last = screen.capture();
    expect(last).toContain('bye');
    expect(last).not.toContain('type the answer and press Enter');
  });

  it('quits cleanly when its terminal closes in the middle of work: tasks handed back, the board released', async () => {
    const screen = open();
    await screen.waitFor(/reviewer \(reviewer\) idle/, 'the team to start', 30_000);
    screen.type(`/post ${REQUIREMENT}`);
    await screen.waitFor(/\[>\] #\d+: /, 'a task in progress');
    // The terminal goes away (its server killed): the REPL gets SIGHUP, and nothing it writes arrives.
    screen.kill();
    const lease = path.join(screen.dir, '.team', 'lead.json');
    await waitUntil(() => !fs.existsSync(lease) || null, "the lead's lease released", 30_000);
    const team = JSON.parse(fs.readFileSync(path.join(screen.dir, '.team', 'config.json'), 'utf8')) as { members: Array<{ status: string }> };
    expect(team.members.map((member) => member.status)).toEqual(['shutdown', 'shutdown', 'shutdown']);
    expect(readTasks(screen.dir).filter((task) => task.status === 'in_progress')).toEqual([]);
  });

  it('`autoteam run` at a terminal says how to answer the analyst, takes the typed answer and ends approved', async () => {
    assertBuilt();
    const screen = new TmuxScreen(tempBoard('autoteam-run-tty-'));
    screens.push(screen);
    // The offline analyst asks one question about this one.
    screen.start(['node', CLI, 'run', '--dir', screen.dir, 'Write a Python script that counts the words in a text file.']);
    await screen.waitFor(/\? analyst asks \(pipeline #1\): .*\n {2}type the answer and press Enter \(--auto lets a simulated user answer instead\)/, 'the question and how to answer it', 30_000, true);
    screen.type('The file named by the first argument; print its line, word and character counts.');
    expect(await screen.exitCode()).toBe(0);
    const output = screen.capture(true);
    expect(output).toMatch(/pipeline #1: APPROVED/);
    expect(output).toContain('! person answers analyst: The file named by the first argument');
    expect(output.match(/type the answer and press Enter/g)).toHaveLength(1);
  });
});
