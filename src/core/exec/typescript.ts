/**
 * The TypeScript compiler, loaded the first time JavaScript or TypeScript needs it. It costs each
 * thread that loads it about 26 MB, and a teammate that only ever works Python never should.
 */
import type ts from 'typescript';

let loading: Promise<typeof ts> | null = null;

export function loadTypeScript(): Promise<typeof ts> {
  loading ??= import('typescript').then((module) => module.default);
  return loading;
}
