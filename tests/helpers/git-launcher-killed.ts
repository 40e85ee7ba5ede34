// Run as `node --import tsx tests/helpers/git-launcher-killed.ts <repo>`: starts a git command that
// takes half a minute, kills the thread's launcher under it, and prints how git() settled. Nothing
// else keeps this process alive, so a git() that waited on an unreferenced launcher would let the
// process exit with the promise still open, and print nothing.
import { execFileSync } from 'node:child_process';
import { git } from '../../src/core/git/git.js';
import { launcherPid } from '../../src/core/exec/launcher.js';

const repo = process.argv[2]!;
const mark = `sleep 30.${process.pid}`;
const running = git(repo, ['-c', `alias.nap=!${mark}`, 'nap']).then(
  () => 'resolved',
  (error: Error) => `rejected: ${error.message}`,
);
const started = (): boolean => {
  try {
    execFileSync('pgrep', ['-f', `^${mark}`]);
    return true;
  } catch {
    return false;
  }
};
const poll = setInterval(() => {
  const launcher = launcherPid();
  if (launcher === undefined || !started()) return;
  clearInterval(poll);
  process.kill(launcher, 'SIGKILL');
}, 20);
console.log(await running);
// A SIGKILL is sent at once and taken when the killed process next runs, which on a busy machine is a
// moment later: gone within 10 s (far below the nap's 30) is nothing left running.
const until = Date.now() + 10_000;
while (started() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
console.log(started() ? 'left running' : 'nothing left');
