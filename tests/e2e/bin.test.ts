/**
 * The built command runs as a program, as the README's `npx autoteam …` runs it in a clone: the build
 * leaves its bundle, dist/cli/bundle/main.js, executable, and its #! line starts Node; and npx's
 * install of the clone does not build it again (scripts/prepare.mjs).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, cliEntry, repoRoot } from '../helpers/pipeline-cli.js';
import { DEFAULT_TEAMMATE_SETTINGS } from '../../src/core/agent/settings.js';

describe('the built command', () => {
  it('is executable, and runs as itself and as `npx autoteam` in the clone', () => {
    expect(fs.statSync(cliEntry).mode & 0o111).not.toBe(0);
    const direct = spawnSync(cliEntry, ['--version'], { encoding: 'utf8', env: cleanEnv() });
    expect(direct.error).toBeUndefined();
    expect(direct.status, direct.stderr).toBe(0);
    const version = (JSON.parse(fs.readFileSync(`${repoRoot}/package.json`, 'utf8')) as { version: string }).version;
    expect(direct.stdout.split('\n')[0]).toBe(version);
    // npx links the clone into its cache and runs its `prepare` there, as on a person's first
    // `npx autoteam`: with a cache of its own, every run of this test is that first one. The build is
    // up to date, so it is not redone: a rebuild would replace dist/ under the suite's other runs.
    // Dated by the command, the build's last output: tests/agent/worker-bundle.test.ts
    // rebuilds the teammates' bundle on its own, perhaps meanwhile.
    const builtAt = fs.statSync(cliEntry).mtimeMs;
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-npx-cache-'));
    try {
      const npx = spawnSync('npx', ['--no-install', 'autoteam', '--version'], { cwd: repoRoot, encoding: 'utf8', env: { ...cleanEnv(), npm_config_cache: cache, npm_config_offline: 'true' } });
      expect(npx.status, npx.stderr).toBe(0);
      expect(npx.stdout.split('\n')[0]).toBe(version);
      expect(fs.readdirSync(path.join(cache, '_npx')), 'npx installed the clone into its cache').toHaveLength(1);
      expect(fs.statSync(cliEntry).mtimeMs, 'dist/ was built again').toBe(builtAt);
    } finally {
      fs.rmSync(cache, { recursive: true, force: true });
    }
  });

  it('in a clone not installed yet, `npx autoteam` says to run npm ci there, and npx keeps a whole copy of the clone for after it', () => {
    // The clone's own command and prepare script, with neither node_modules nor dist/ beside them.
    const clone = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-uninstalled-'));
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-npx-cache-'));
    try {
      const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { name: string; version: string; type: string; bin: Record<string, string>; scripts: Record<string, string> };
      const { name, version, type, bin } = manifest;
      fs.writeFileSync(path.join(clone, 'package.json'), JSON.stringify({ name, version, type, bin, scripts: { prepare: manifest.scripts.prepare, build: manifest.scripts.build } }));
      for (const file of [bin.autoteam!, 'scripts/prepare.mjs']) {
        fs.mkdirSync(path.dirname(path.join(clone, file)), { recursive: true });
        fs.copyFileSync(path.join(repoRoot, file), path.join(clone, file));
        fs.chmodSync(path.join(clone, file), fs.statSync(path.join(repoRoot, file)).mode);
      }
      const npx = () => spawnSync('npx', ['--no-install', 'autoteam', '--version'], { cwd: clone, encoding: 'utf8', env: { ...cleanEnv(), npm_config_cache: cache, npm_config_offline: 'true' } });
      for (const run of [npx(), npx()]) {
        expect(run.status, run.stderr).toBe(2);
        expect(run.stderr.trim()).toBe(`autoteam: not built yet: run npm ci in ${clone} (it installs and builds)`);
      }
    } finally {
      fs.rmSync(clone, { recursive: true, force: true });
      fs.rmSync(cache, { recursive: true, force: true });
    }
  });

  it("--help gives each limit's default as the runtime has it", () => {
    const help = spawnSync(cliEntry, ['run', '--help'], { encoding: 'utf8', env: cleanEnv(), maxBuffer: 1 << 20 }).stdout.replace(/\s+/g, ' ');
    const { runtime } = DEFAULT_TEAMMATE_SETTINGS;
    const defaults: Array<[string, number]> = [
      ['--max-turns', DEFAULT_TEAMMATE_SETTINGS.maxTurns],
      ['--max-questions', runtime.maxQuestions],
      ['--token-budget', DEFAULT_TEAMMATE_SETTINGS.tokenBudget],
      ['--max-revisions', runtime.maxRevisions],
      ['--max-pipeline-steps', runtime.maxPipelineSteps],
      ['--token-budget-pipeline', runtime.pipelineTokenBudget],
      ['--max-attempts', DEFAULT_TEAMMATE_SETTINGS.maxAttempts],
    ];
    for (const [flag, value] of defaults) expect(help, flag).toMatch(new RegExp(`${flag} <n> [^;]*; default ${value} \\(env`));
    const seconds = (ms: number) => `${ms / 1000}s`;
    for (const [flag, value] of [['--poll-interval', seconds(DEFAULT_TEAMMATE_SETTINGS.pollMs)], ['--idle-timeout', `${seconds(DEFAULT_TEAMMATE_SETTINGS.idleTimeoutMs)} for a lead's teammates, never for autoteam worker`], ['--command-timeout', seconds(DEFAULT_TEAMMATE_SETTINGS.commandTimeoutMs)]]) {
      expect(help, flag).toMatch(new RegExp(`${flag} <duration> .*?; default ${value} \\(env`));
    }
    expect(help).toMatch(new RegExp(`--sandbox <mode> .*?; default ${DEFAULT_TEAMMATE_SETTINGS.sandbox.mode} \\(env`));
    const worker = spawnSync(cliEntry, ['worker', '--help'], { encoding: 'utf8', env: cleanEnv() }).stdout.replace(/\s+/g, ' ');
    expect(worker).toMatch(/--role <role> analyst, engineer, reviewer, a role of your own stages, or any/);
  });

  it('names a mistyped command, with or without arguments after it, and the command it is a slip for, and exits 2', () => {
    for (const args of [['rnu'], ['rnu', 'Write a word counter']]) {
      const run = spawnSync(cliEntry, args, { encoding: 'utf8', env: cleanEnv() });
      expect(run.status, run.stderr).toBe(2);
      expect(run.stderr.trim()).toBe("autoteam: unknown command 'rnu' — did you mean run? (autoteam --help lists them)");
    }
    // A slip of a letter or two is named, as the REPL's /taks is; another word is not.
    const slip = spawnSync(cliEntry, ['taks'], { encoding: 'utf8', env: cleanEnv() });
    expect(slip.status, slip.stderr).toBe(2);
    expect(slip.stderr.trim()).toBe("autoteam: unknown command 'taks' — did you mean tasks? (autoteam --help lists them)");
    const other = spawnSync(cliEntry, ['frobnicate'], { encoding: 'utf8', env: cleanEnv() });
    expect(other.stderr.trim()).toBe("autoteam: unknown command 'frobnicate' (autoteam --help lists them)");
    // A command under another, and an option of the program's own, say where theirs are listed.
    const nested = spawnSync(cliEntry, ['mcp', 'frobnicate'], { encoding: 'utf8', env: cleanEnv() });
    expect([nested.status, nested.stderr.trim()]).toEqual([2, "autoteam: unknown command 'mcp frobnicate' (autoteam mcp --help lists them)"]);
    const option = spawnSync(cliEntry, ['--frobnicate'], { encoding: 'utf8', env: cleanEnv() });
    expect([option.status, option.stderr.trim()]).toEqual([2, "autoteam: unknown option '--frobnicate' (autoteam --help lists the options)"]);
    // A command's own flag given before the command: said where it goes.
    const early = spawnSync(cliEntry, ['--json', 'tasks'], { encoding: 'utf8', env: cleanEnv() });
    expect([early.status, early.stderr.trim()]).toEqual([2, "autoteam: unknown option '--json' — it is an option of tasks: put it after the command (autoteam tasks --json)"]);
    // `autoteam help [command]` is --help, as git's and npm's are: nothing read first, not even a broken config.
    const broken = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-help-'));
    fs.writeFileSync(path.join(broken, 'autoteam.config.json'), '{ broken');
    const help = spawnSync(cliEntry, ['help', 'run'], { encoding: 'utf8', env: cleanEnv(), cwd: broken });
    fs.rmSync(broken, { recursive: true, force: true });
    expect([help.status, help.stdout.split('\n')[0]]).toEqual([0, 'Usage: autoteam run [options] [requirement...]']);
    const top = spawnSync(cliEntry, ['help'], { encoding: 'utf8', env: cleanEnv() }).stdout;
    expect(top).toMatch(/^Usage: autoteam \[options\] \[command\]/);
    expect(spawnSync(cliEntry, ['help', 'help'], { encoding: 'utf8', env: cleanEnv() }).stdout).toMatch(/^Usage: autoteam \[options\] \[command\]/);
    const extra = spawnSync(cliEntry, ['help', 'run', 'extra'], { encoding: 'utf8', env: cleanEnv() });
    expect([extra.status, extra.stderr.trim()]).toEqual([2, "autoteam: autoteam help takes one command's name, got 'run extra'"]);
    // Listed with the commands, there only: a command's own help has no commands to list.
    expect(top).toMatch(/^  help \[command\] +print the help, or a command's$/m);
    expect(spawnSync(cliEntry, ['run', '--help'], { encoding: 'utf8', env: cleanEnv() }).stdout).not.toContain('help [command]');
    // A requirement in the command's place: where a requirement goes.
    const sentence = spawnSync(cliEntry, ['Write a word counter'], { encoding: 'utf8', env: cleanEnv() });
    expect(sentence.status, sentence.stderr).toBe(2);
    expect(sentence.stderr.trim()).toBe(
      "autoteam: unknown command 'Write a word counter' — a requirement goes to autoteam run \"…\" (work it now) or autoteam post \"…\" (onto the board), or is typed in the REPL (autoteam --help lists them)",
    );
  });

  it('refuses an option whose value is another option or the requirement (a value left out), naming it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-novalue-'));
    try {
      for (const [args, message] of [
        [['run', '--dir', '--auto', 'Write a word counter'], 'autoteam: --dir is missing its value: --auto is an option of its own'],
        [['--dir', '--auto'], 'autoteam: --dir is missing its value: --auto is an option of its own'],
        [['run', '--model', '--max-revisions=2', 'Write a word counter'], 'autoteam: --model is missing its value: --max-revisions=2 is an option of its own'],
        // The requirement taken as the value: no requirement is left, and the flag is named.
        [['run', '--model', 'Write a word counter'], "autoteam: missing required argument 'requirement' (or --file <path>, one a line) — --model took 'Write a word counter' as its value: was its own left out?"],
      ] as const) {
        const run = spawnSync(cliEntry, args, { cwd: dir, encoding: 'utf8', env: cleanEnv() });
        expect(run.status, run.stderr).toBe(2);
        expect(run.stderr.trim()).toBe(message);
      }
      // Nothing was started or made: no board, and no folder named after the option.
      expect(fs.readdirSync(dir)).toEqual([]);
      // Given as one word, the value is what was meant: a folder that is called --auto.
      fs.mkdirSync(path.join(dir, '--auto'));
      const joined = spawnSync(cliEntry, ['tasks', '--dir=--auto'], { cwd: dir, encoding: 'utf8', env: cleanEnv() });
      expect(joined.status, joined.stderr).toBe(0);
      expect(joined.stdout.trim()).toBe(`No tasks (no .tasks/ in ${path.join(fs.realpathSync(dir), '--auto')}).`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('passes an option given before a command down to it, checked as its own; one the command lacks is refused, not ignored', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-passdown-'));
    try {
      const cli = (...args: string[]) => spawnSync(cliEntry, args, { cwd: dir, encoding: 'utf8', env: cleanEnv() });
      // Taken by run as if given after it: checked (a bad value is named), and used (no engineer leaves a run nobody to implement).
      const bad = cli('--max-revisions', 'abc', 'run', 'Write a word counter');
      expect(bad.status, bad.stderr).toBe(2);
      expect(bad.stderr.trim()).toBe("autoteam: --max-revisions: 'abc' is not a whole number (0 or more)");
      const none = cli('--engineers', '0', 'run', 'Write a word counter');
      expect(none.status, none.stderr).toBe(2);
      expect(none.stderr.trim()).toMatch(/^autoteam: --engineers: no engineer on this team, and a run waits/);
      // Given after the command too: the command's own wins.
      const own = cli('--engineers', '0', 'run', '--engineers', '40', 'Write a word counter');
      expect(own.stderr.trim()).toBe('autoteam: --engineers: 40 is more than 32 teammates of one role');
      for (const [args, message] of [
        [['--no-team', 'run', 'x'], 'autoteam: --no-team is not an option of run (autoteam run --help lists its options)'],
        [['--engineers', '2', 'tasks'], 'autoteam: --engineers is not an option of tasks (autoteam tasks --help lists its options)'],
        // After the command, said the same way.
        [['tasks', '--engineers', '2'], 'autoteam: --engineers is not an option of tasks (autoteam tasks --help lists its options)'],
        [['mcp', 'serve', '--bogus'], 'autoteam: --bogus is not an option of mcp serve (autoteam mcp serve --help lists its options)'],
        // Too many arguments, or one left out: the command's own words, and where its usage is.
        [['cancel', '1', '2'], 'autoteam: cancel takes one argument, not 2 (autoteam cancel --help shows its usage)'],
        [['tasks', 'all'], 'autoteam: tasks takes no arguments, not 1 (autoteam tasks --help shows its usage)'],
        [['retry'], 'autoteam: retry needs its <pipeline> (autoteam retry --help shows its usage)'],
        // Words that begin with a dash are a requirement, not a flag: where -- goes is said.
        [['run', '--auto', '--verbose mode for the organizer'], "autoteam: '--verbose mode for the organizer' begins with -, so it reads as an option: put -- before it (autoteam run [options] -- '--verbose mode for the organizer')"],
        [['post', "-v shouldn't print the version"], "autoteam: '-v shouldn't print the version' begins with -, so it reads as an option: put -- before it (autoteam post [options] -- '-v shouldn'\\''t print the version')"],
        // A mistyped flag whose value has a space is still a flag.
        [['run', '--fle=my reqs.txt'], 'autoteam: --fle=my reqs.txt is not an option of run (autoteam run --help lists its options)'],
      ] as const) {
        const refused = cli(...args);
        expect(refused.status, refused.stderr).toBe(2);
        expect(refused.stderr.trim()).toBe(message);
      }
      // Nothing was started or made.
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
