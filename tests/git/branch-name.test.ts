/** A pipeline's branch: `autoteam/<n>-<words of its requirement>`, at most 40 characters of words. */
import { describe, expect, it } from 'vitest';
import { branchName } from '../../src/core/git/worktree.js';

describe('branchName', () => {
  it('takes the words of the requirement that fit in 40 characters, accents dropped, other scripts leaving the number alone', () => {
    expect(branchName(3, 'Write a Python script that counts the words in a text file')).toBe('autoteam/3-write-a-python-script-that-counts-the');
    expect(branchName(4, 'Créer un café')).toBe('autoteam/4-creer-un-cafe');
    expect(branchName(5, '写一个程序')).toBe('autoteam/5');
    expect(branchName(6, '!!! ???')).toBe('autoteam/6');
  });

  it('cuts a first word longer than the slug instead of leaving the branch bare', () => {
    expect(branchName(7, `${'a'.repeat(60)} then more`)).toBe(`autoteam/7-${'a'.repeat(40)}`);
    // A long word after others is left out, as any word that does not fit.
    expect(branchName(8, 'https://example.com/averyveryverylongpathsegmentwithoutanybreaks')).toBe('autoteam/8-https-example-com');
  });
});
