import path from 'node:path';
import { AutoteamError } from '../errors.js';

export type Language = 'python' | 'javascript' | 'typescript';

const EXTENSIONS: Record<string, Language> = {
  '.py': 'python',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.ts': 'typescript',
  '.tsx': 'typescript',
};

export const SUPPORTED_EXTENSIONS = Object.keys(EXTENSIONS);

export class UnsupportedLanguageError extends AutoteamError {
  constructor(file: string, action: string) {
    super(`cannot ${action} '${file}': supported files are ${SUPPORTED_EXTENSIONS.join(', ')}`, 'UNSUPPORTED_LANGUAGE');
  }
}

/** The language of `file` by extension, or throws UnsupportedLanguageError naming what is supported. */
export function languageOf(file: string, action = 'check'): Language {
  const language = EXTENSIONS[path.extname(file).toLowerCase()];
  if (!language) throw new UnsupportedLanguageError(file, action);
  return language;
}

/** Whether this Node can run `.ts` files itself (Node ≥ 22.6); Node 20 cannot. */
export function nodeStripsTypes(): boolean {
  return process.allowedNodeEnvironmentFlags.has('--experimental-strip-types');
}
