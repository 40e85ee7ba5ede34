/**
 * `autoteam.config.json` at the board root: the team, a model per role, the stages' prompts and
 * tools, the limits, and prices. Optional — without it autoteam runs as documented; `autoteam init`
 * writes the defaults. Every error names the file and the key path.
 */
export const CONFIG_FILE = 'autoteam.config.json';

/**
 * The files autoteam reads from a folder when it starts there: `.env` (the person's keys, and
 * settings such as AUTOTEAM_SANDBOX and ANTHROPIC_BASE_URL) and the config (hooks that run with the
 * person's rights, outside any sandbox). What the agents write never creates or changes them: a
 * model talked into writing one would be obeyed at the next start.
 */
export const TRUSTED_FILES: readonly string[] = ['.env', CONFIG_FILE];
