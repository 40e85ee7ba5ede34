import { MAX_PER_ROLE, type ProjectConfig, type TeamEntry } from '../config/project-config.js';
import { ConfigError } from '../errors.js';
import { StageRegistry } from '../stages/stage-registry.js';
import { DEFAULT_TEAM, type TeamMemberSpec } from './session-types.js';

/**
 * How many teammates of each role a lead starts: the configured team (`team[].count`, 1 when absent)
 * with `--analysts N`, `--engineers N` and `--reviewers N` over it. Copies of a member are named
 * after it — engineer, engineer-2, engineer-3 — each name unique on the team.
 */


/** The flags, by the role each sizes. */
export const ROLE_FLAGS = [
  { flag: '--analysts', key: 'analysts', role: 'analyst' },
  { flag: '--engineers', key: 'engineers', role: 'engineer' },
  { flag: '--reviewers', key: 'reviewers', role: 'reviewer' },
] as const;

/** A flag's count for a role. */
export interface RoleCount {
  role: string;
  count: number;
  /** The flag as typed, for errors (`--engineers`). */
  flag: string;
}

/** A flag's value: a whole number from 0 to MAX_PER_ROLE, or an error naming the flag. */
export function parseRoleCount(flag: string, raw: unknown): number {
  const text = String(raw).trim();
  if (!/^\d+$/.test(text)) throw new ConfigError(`${flag}: '${String(raw)}' is not a number of teammates: a whole number from 0 to ${MAX_PER_ROLE}`);
  const count = Number(text);
  if (count > MAX_PER_ROLE) throw new ConfigError(`${flag}: ${count} is more than ${MAX_PER_ROLE} teammates of one role`);
  return count;
}

/** The counts the flags give, read from a command's options (`{ engineers: '2' }`). */
export function roleCounts(options: Record<string, unknown>): RoleCount[] {
  return ROLE_FLAGS.filter(({ key }) => options[key] !== undefined).map(({ flag, key, role }) => ({ role, flag, count: parseRoleCount(flag, options[key]) }));
}

interface Slot {
  base: string;
  role: string;
  prompt?: string;
  /** The configured entry's own first copy keeps its name as it is. */
  own: boolean;
}

export interface SizedTeam {
  members: TeamMemberSpec[];
  /**
   * Roles a stage needs that no member has: because a count of 0 removed them (`by` names it; said at
   * start), or because the team never had one (`by` is 'team'; the config's check warns of it).
   */
  unstaffed: Array<{ role: string; by: string; missing?: true }>;
}

/**
 * The team to start. A flag sets how many teammates its role has: the role's members are kept in
 * order and cut to N, or copies of its first member are added up to N (a role the team lacks gets N
 * members named after the role). A count of 0 (flag or `team[].count`) removes the role: `unstaffed`
 * names each role a stage needs that is left without anyone (`needed`: the stages' roles).
 */
export function sizeTeam(entries: readonly TeamEntry[], counts: readonly RoleCount[], needed: readonly string[] = []): SizedTeam {
  const slots: Slot[] = [];
  const zeroBy = new Map<string, string>();
  entries.forEach((entry, i) => {
    const count = entry.count ?? 1;
    if (count === 0) zeroBy.set(entry.role, `team.${i}.count`);
    for (let k = 0; k < count; k++) slots.push({ base: entry.name, role: entry.role, ...(entry.prompt ? { prompt: entry.prompt } : {}), own: k === 0 });
  });
  for (const { role, count, flag } of counts) {
    const ofRole = slots.filter((slot) => slot.role === role);
    if (count === 0) zeroBy.set(role, flag);
    else zeroBy.delete(role);
    if (ofRole.length >= count) {
      for (const slot of ofRole.slice(count)) slots.splice(slots.indexOf(slot), 1);
      continue;
    }
    // Copies of the role's first member (one whose count was 0 still lends its name and prompt).
    const first = entries.find((entry) => entry.role === role);
    const model = ofRole[0] ?? (first ? { base: first.name, prompt: first.prompt } : undefined);
    const extra: Slot[] = Array.from({ length: count - ofRole.length }, () => ({
      base: model?.base ?? role,
      role,
      ...(model?.prompt ? { prompt: model.prompt } : {}),
      own: false,
    }));
    const after = ofRole.length ? slots.indexOf(ofRole.at(-1)!) + 1 : slots.length;
    slots.splice(after, 0, ...extra);
  }
  const members = nameSlots(slots);
  const staffed = new Set(members.map((member) => member.role));
  const unstaffed = staffed.has('any')
    ? []
    : [...new Set(needed)].filter((role) => role !== 'any' && !staffed.has(role)).map((role) => (zeroBy.has(role) ? { role, by: zeroBy.get(role)! } : { role, by: 'team', missing: true as const }));
  return { members, unstaffed };
}

/**
 * The first copy of each configured member keeps its name; every other copy gets the lowest free `-k`
 * (k ≥ 2). Free in any case: names that differ only in case would share an inbox file on a
 * case-insensitive disk.
 */
function nameSlots(slots: readonly Slot[]): TeamMemberSpec[] {
  const taken = new Set(slots.filter((slot) => slot.own).map((slot) => slot.base.toLowerCase()));
  return slots.map((slot) => {
    let name = slot.base;
    if (!slot.own) {
      // A role the team lacked: its first member is named after it, when that name is free.
      if (taken.has(name.toLowerCase())) {
        let k = 2;
        while (taken.has(`${slot.base}-${k}`.toLowerCase())) k++;
        name = `${slot.base}-${k}`;
      }
      if (name.length > 64) throw new ConfigError(`team: '${slot.base}' is too long to number its copies ('${name}' is over 64 characters)`);
      taken.add(name.toLowerCase());
    }
    return { name, role: slot.role, ...(slot.prompt ? { prompt: slot.prompt } : {}) };
  });
}

/** What a count of 0 leaves waiting, as one line (the REPL says it; `run` refuses to start with it). */
export function describeUnstaffed({ role, by }: { role: string; by: string }): string {
  return `${by}: no ${role} on this team, so ${role} tasks wait until one joins (autoteam worker --role ${role})`;
}

/**
 * The team a lead starts: the project's (or the default one) sized by the flags. A role a stage needs
 * that a count of 0 left empty is said (`say`) — or, when `strict` (a `run`, which waits for its
 * pipelines to end), refused before anything starts, unless `covered` says a live member of another
 * process already on the board has the role. `from`: the stage a run's pipelines start at, so
 * only the stages they can reach need a role (`--start-stage implementation --analysts 0`).
 */
export function startingTeam(
  project: Pick<ProjectConfig, 'team' | 'stages'> & { file?: string | null },
  counts: readonly RoleCount[],
  options: { strict: boolean; say: (line: string) => void; from?: string; covered?: (role: string) => boolean },
): TeamMemberSpec[] {
  const stages = StageRegistry.from(project.stages);
  const needed = (options.from ? stages.reachable(options.from) : stages.all()).map((stage) => stage.role);
  const { members, unstaffed } = sizeTeam(project.team ?? DEFAULT_TEAM, counts, needed);
  for (const found of unstaffed) {
    // A count of the config's is named with its file, as every other mistake in it is.
    const gap = project.file && (found.by === 'team' || found.by.startsWith('team.')) ? { ...found, by: `${project.file}: ${found.by}` } : found;
    // A live member of another process (`autoteam worker --role …`) already on the board covers it.
    if (options.covered?.(gap.role)) {
      options.say(`note: ${gap.by}: no ${gap.role} on this team: the live ${gap.role} already on the board works its tasks`);
      continue;
    }
    if (options.strict) {
      const flag = ROLE_FLAGS.find((known) => known.role === gap.role)?.flag;
      const give = gap.missing ? `add one to team${flag ? ` or give ${flag} 1` : ''}` : 'give 1 or more';
      throw new ConfigError(`${gap.by}: no ${gap.role} on this team, and a run waits for its pipelines to end, so it needs one (${give}, or start an autoteam worker --role ${gap.role} on the board first)`);
    }
    // A role the team never had is said once already, by the config's own check.
    if (!gap.missing) options.say(describeUnstaffed(gap));
  }
  return members;
}
