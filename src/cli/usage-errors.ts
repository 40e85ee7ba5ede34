import type { Command } from 'commander';

type OutputError = (text: string, write: (text: string) => void) => void;

/**
 * How commander's usage errors read, for `program` and every command under it (nested ones too: `mcp
 * serve`): like every other error ("autoteam: unknown option '--bogus'"), each naming where the
 * options or commands it lacks are listed; a flag a command does not take is said as one given
 * before it is (main.ts's passDown): `--engineers is not an option of post (…)`. Every command exits
 * through an exception, not the process's exit (exit 2 is main's to give).
 */
export function configureUsageErrors(program: Command, argv: readonly string[] = process.argv): void {
  const said: OutputError = (text, write) => write(text.replace(/^error: /, 'autoteam: '));
  const writeErr = (text: string) => process.stderr.write(text);
  // A flag of a command given before it (`autoteam --json tasks`): only the program's own may stand
  // there, so it is said where it goes.
  const placed = (flag: string): string => {
    const name = flag.split('=')[0]!;
    // The command is the first word that names one (`run fix tasks` is run's, with two requirements).
    const named = argv.slice(2).find((arg) => !arg.startsWith('-') && program.commands.some((sub) => sub.name() === arg));
    const command = program.commands.find((sub) => sub.name() === named && sub.options.some((option) => option.long === name || option.short === name));
    return command ? ` — it is an option of ${command.name()}: put it after the command (autoteam ${command.name()} ${flag})` : ' (autoteam --help lists the options)';
  };
  program.exitOverride().configureOutput({ writeErr, outputError: (text, write) => said(text.replace(/^(error: unknown option '([^']*)')$/m, (_line, said: string, flag: string) => `${said}${placed(flag)}`), write) });
  const configure = (command: Command, parents = ''): void => {
    for (const sub of command.commands) {
      const name = `${parents}${sub.name()}`;
      const unknown = (text: string) =>
        text
          // Words with a space before any `=` are text (a requirement) that begins with a dash, not a flag.
          .replace(/^error: unknown option '(-[^=\s]*\s[\s\S]*)'$/m, (_line, words: string) => `error: '${words}' begins with -, so it reads as an option: put -- before it (autoteam ${name} [options] -- ${shellQuoted(words)})`)
          .replace(/^error: unknown option '(-[^']*)'/, `error: $1 is not an option of ${name} (autoteam ${name} --help lists its options)`)
          .replace(/^error: unknown command '([^']*)'$/m, `error: unknown command '${name} $1' (autoteam ${name} --help lists them)`)
          .replace(/^error: too many arguments for '[^']*'\. Expected (\d+) arguments? but got (\d+)\.$/m, (_line, expected: string, got: string) => `error: ${name} takes ${Number(expected) === 0 ? 'no arguments' : Number(expected) === 1 ? 'one argument' : `at most ${expected} arguments`}, not ${got} (autoteam ${name} --help shows its usage)`)
          .replace(/^error: missing required argument '([^']*)'$/m, `error: ${name} needs its <$1> (autoteam ${name} --help shows its usage)`);
      configure(sub.exitOverride().configureOutput({ writeErr, outputError: (text, write) => said(unknown(text), write) }), `${name} `);
    }
  };
  configure(program);
}

/** `text` as one word of a POSIX shell: in single quotes, each of its own written '\''. */
function shellQuoted(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}
