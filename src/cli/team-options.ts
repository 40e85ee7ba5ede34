import type { Command } from 'commander';
import { MAX_PER_ROLE } from '../core/config/project-config.js';
import { ROLE_FLAGS } from '../core/lead/team-size.js';

/** `--analysts N`, `--engineers N`, `--reviewers N`: on every command that starts the team. */
export function teamSizeOptions(command: Command): Command {
  for (const { flag, role } of ROLE_FLAGS) {
    command.option(`${flag} <n>`, `how many ${role}s the team starts (0 to ${MAX_PER_ROLE}: ${role}, ${role}-2, …), over autoteam.config.json's team`);
  }
  return command;
}
