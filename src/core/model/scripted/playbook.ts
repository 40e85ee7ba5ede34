import { otherLanguage } from './repertoire.js';

/**
 * The offline simulated user: answers an analyst's question from keywords, assuming sensible
 * defaults, and tells a repeated question to proceed (the experiment's anti-repetition rule).
 */
const PLAYBOOK: Array<{ match: RegExp; answer: string }> = [
  {
    match: /type|categor|extension|group|folder names?|kinds?/i,
    answer:
      'Group by extension: Images (jpg, png, gif, webp, heic), Documents (pdf, docx, txt, md, csv, xlsx, pptx), Archives (zip, tar, gz, 7z), Audio (mp3, wav, flac), Video (mp4, mkv, mov), Installers (dmg, pkg, exe, deb); anything else goes to Other.',
  },
  {
    match: /exist|duplicate|conflict|same name|overwrite|collision/i,
    answer: 'Never overwrite: add a numeric suffix like "report (1).pdf" to the new name.',
  },
  { match: /recurs|sub ?folder|nested/i, answer: 'Only the top level of the folder; leave existing subfolders alone.' },
  { match: /dry|preview|undo|confirm/i, answer: 'Add a --dry-run flag that only prints what would move.' },
  {
    match: /path|where|location|director|which folder/i,
    answer: 'Default to ~/Downloads, and accept another folder as a command-line argument.',
  },
  { match: /language|python|javascript|node|run it|platform|os\b/i, answer: 'Python 3, standard library only, on Linux and macOS.' },
  {
    match: /input|output|format|print|report|log/i,
    answer: 'Read the file named by the first command-line argument (standard input when there is none) and print the result to stdout.',
  },
];

export function normalizeQuestion(question: string): string {
  return question.toLowerCase().replace(/[^a-z0-9 ]/g, '').replace(/\s+/g, ' ').trim();
}

export function playbookAnswer(question: string, previous: readonly string[], requirement = ''): string {
  const key = normalizeQuestion(question);
  if (previous.some((q) => normalizeQuestion(q) === key)) {
    return 'You already asked that. Please proceed with what you have and assume sensible defaults.';
  }
  // The person already said which language: the simulated user does not contradict the request.
  if (/language|runtime/i.test(question)) {
    const named = otherLanguage(requirement) ?? /\b(javascript|node(?:\.js)?|typescript|python)\b/i.exec(requirement)?.[1];
    if (named) return `${named}, as in the request.`;
  }
  return PLAYBOOK.find((entry) => entry.match.test(question))?.answer ?? 'Use your best judgement and sensible defaults.';
}
