// Makes the built command executable, as npm does for an installed package's bin: `npx autoteam` in a
// clone (and `npm link`) runs dist/cli/main.js as a program, through its #! line. tsc writes it 0644.
// Part of `npm run build`.
import fs from 'node:fs';

fs.chmodSync(new URL('../dist/cli/main.js', import.meta.url), 0o755);
