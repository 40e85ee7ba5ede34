/** `n` and the noun for it: `1 issue`, `2 issues`, `2 processes` (`many` where adding an s is wrong). */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
