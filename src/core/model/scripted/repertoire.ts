/**
 * What the offline team can really build, and how it reads a person's answers into a spec. The
 * offline model implements only these; for anything else it says so instead of writing a stub.
 */

export type Language = 'python' | 'javascript';
export type ProgramKind = 'organizer' | 'wordcount';

/** The line the offline team ends a pipeline with when a requirement is outside its repertoire. */
export const OFFLINE_CANNOT = 'the offline model cannot implement this requirement — set ANTHROPIC_API_KEY';

export function detectLanguage(text: string): Language {
  return /\b(javascript|node(\.js)?|typescript|js)\b/i.test(text) && !/\bpython\b/i.test(text) ? 'javascript' : 'python';
}

const ORGANIZE_VERB = /\b(organi[sz](e|es|ing|er)|sort(s|ing)?|tid(y|ies)|clean(s)? ?up|arrang(e|es|ing))\b/i;
const TYPE_WORDS = /\b(by (file )?(type|extension|kind|category)|file[- ]types?|extensions?|into (sub)?folders)\b/i;
const COUNT_VERB = /\b(count(s|er|ing)?|wc)\b/i;
/** Things the word counter is not: "count HN titles", "word frequencies", "lines of code in a repo". */
const NOT_WORDCOUNT = /\b(hn|hacker ?news|titles?|urls?|web|https?|pages?|scrap\w*|frequenc\w*|most common|top \d+|unique|distinct|csv|json|database|git|repo\w*|commits?|code)\b/i;
/** Things the organizer is not: lines, playlists, mail, photos by date. */
const NOT_ORGANIZER = /\b(lines?|playlists?|songs?|e-?mails?|inbox|by (date|size|name)|database|rows?|csv|json|bookmarks?|contacts?|tabs?)\b/i;

/** The program of the repertoire the requirement clearly asks for, or null. Near misses are null. */
export function kindOf(requirement: string): ProgramKind | null {
  const text = requirement.toLowerCase();
  if (ORGANIZE_VERB.test(text) && !NOT_ORGANIZER.test(text)) {
    if (/\bdownloads\b/.test(text)) return 'organizer';
    if (/\b(folders?|director(y|ies))\b/.test(text) && TYPE_WORDS.test(text)) return 'organizer';
  }
  if (COUNT_VERB.test(text) && /\bwords?\b/.test(text) && /\b(files?|text|stdin|standard input|input)\b/.test(text) && !NOT_WORDCOUNT.test(text)) {
    return 'wordcount';
  }
  return null;
}

export interface Category {
  name: string;
  extensions: string[];
}

export type ConflictPolicy = 'suffix' | 'skip' | 'overwrite';

export interface OrganizerSpec {
  categories: Category[];
  /** Where files of any other type go. */
  fallback: string;
  conflict: ConflictPolicy;
  /** With `skip`: print a warning for each file left in place. */
  warn: boolean;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

const KNOWN: Array<{ names: RegExp; extensions: string[] }> = [
  { names: /^(images?|pictures?|photos?|pics|graphics)$/i, extensions: ['.jpg', '.jpeg', '.png', '.gif', '.bmp', '.svg', '.webp', '.heic'] },
  {
    names: /^(documents?|docs?|texts?|papers)$/i,
    extensions: ['.pdf', '.doc', '.docx', '.txt', '.md', '.odt', '.rtf', '.csv', '.xls', '.xlsx', '.ppt', '.pptx'],
  },
  { names: /^(archives?|compressed|zips?)$/i, extensions: ['.zip', '.tar', '.gz', '.tgz', '.rar', '.7z'] },
  { names: /^(audio|music|songs?|sounds?)$/i, extensions: ['.mp3', '.wav', '.flac', '.ogg', '.m4a'] },
  { names: /^(videos?|movies?|films?)$/i, extensions: ['.mp4', '.mkv', '.mov', '.avi', '.webm'] },
  { names: /^(installers?|apps?|setups?)$/i, extensions: ['.dmg', '.pkg', '.exe', '.msi', '.deb', '.appimage'] },
  { names: /^(code|scripts?|source)$/i, extensions: ['.py', '.js', '.ts', '.html', '.css', '.json', '.sh'] },
];
const FALLBACK_NAMES = /^(other|others|misc|miscellaneous|rest|unsorted|everything ?else)$/i;
/** Capitalised words that are not category names: "Group by extension: …", "Use Pictures and …". */
const NOT_NAMES = /^(group|groups|use|put|just|only|keep|make|sort|move|and|or|the|a|an|by|with|for|everything|anything|all|files?|folders?|i|please|no|yes|one|two)$/i;

export const DEFAULT_ORGANIZER_SPEC: OrganizerSpec = {
  categories: ['Images', 'Documents', 'Archives', 'Audio', 'Video', 'Installers', 'Code'].map((name) => ({
    name,
    extensions: KNOWN.find((known) => known.names.test(name))!.extensions,
  })),
  fallback: 'Other',
  conflict: 'suffix',
  warn: false,
};

const extension = (token: string) => `.${token.trim().replace(/^\*?\./, '').toLowerCase()}`;
const titleCase = (word: string) => word[0]!.toUpperCase() + word.slice(1);

/**
 * Reads an answer about file categories: explicit groups (`Images (jpg, png), Documents (pdf)`),
 * or known folder names (`Pictures and Misc only`), and where everything else goes. A name it does
 * not know, without extensions, makes it give up rather than guess.
 */
export function categoriesFromAnswer(answer: string): Parsed<Pick<OrganizerSpec, 'categories' | 'fallback'>> {
  const categories: Category[] = [];
  let fallback: string | null = null;
  const elsewhere = /\b(?:anything|everything) else\b[^.;]*?\b(?:to|into|in)\s+(?:an?\s+|the\s+)?["']?([A-Za-z][\w-]*)/i.exec(answer);
  if (elsewhere) fallback = titleCase(elsewhere[1]!);
  for (const match of answer.matchAll(/([A-Za-z][\w-]*)\s*\(([^)]*)\)/g)) {
    const extensions = match[2]!.split(/[,\s/]+/).filter((token) => /^\*?\.?[a-z0-9]{1,10}$/i.test(token)).map(extension);
    if (extensions.length) categories.push({ name: titleCase(match[1]!), extensions });
  }
  if (categories.length === 0) {
    const unknown: string[] = [];
    for (const word of answer.match(/[A-Za-z][\w-]*/g) ?? []) {
      const known = KNOWN.find((entry) => entry.names.test(word));
      if (known && !categories.some((c) => c.name.toLowerCase() === word.toLowerCase())) {
        categories.push({ name: titleCase(word), extensions: known.extensions });
      } else if (FALLBACK_NAMES.test(word) && !fallback) {
        fallback = titleCase(word);
      } else if (/^[A-Z]/.test(word) && !NOT_NAMES.test(word) && !known && !FALLBACK_NAMES.test(word) && word !== fallback) {
        unknown.push(word);
      }
    }
    if (unknown.length) return { ok: false, reason: `it cannot tell which files go into ${unknown.map((u) => `'${u}'`).join(', ')}` };
  }
  if (categories.length === 0) return { ok: false, reason: `it could not turn the answer '${answer.slice(0, 80)}' into file categories` };
  return { ok: true, value: { categories, fallback: fallback ?? 'Other' } };
}

/** Reads an answer about name conflicts: numbered suffix, skip (and warn), or overwrite. */
export function conflictFromAnswer(answer: string): Parsed<Pick<OrganizerSpec, 'conflict' | 'warn'>> {
  const text = answer.toLowerCase();
  if (/suffix|renam|number|\(1\)|keep both|never overwrite|don't overwrite|do not overwrite|not overwrite/.test(text)) {
    return { ok: true, value: { conflict: 'suffix', warn: false } };
  }
  if (/\bskip|leave (it|them|the file)|don't move|do not move|\bignore/.test(text)) {
    return { ok: true, value: { conflict: 'skip', warn: /warn|report|print|tell|log|message|mention/.test(text) } };
  }
  if (/overwrit|replac/.test(text)) return { ok: true, value: { conflict: 'overwrite', warn: false } };
  return { ok: false, reason: `it cannot tell what to do with a name conflict from '${answer.slice(0, 80)}'` };
}

/** Output the word counter does not produce: an answer asking for it is beyond the offline model. */
const WORDCOUNT_BEYOND = /\b(json|csv|xml|html|frequenc\w*|unique|distinct|most common|top \d+|per word|chart|graph|gui|web|database|sorted)\b/i;

/** Whether the word counter (file argument or stdin → lines, words, characters) is what the answers describe. */
export function wordcountSupports(requirements: Record<string, string>): Parsed<true> {
  const answer = requirements.inputs_outputs ?? '';
  const beyond = WORDCOUNT_BEYOND.exec(answer);
  return beyond ? { ok: false, reason: `it cannot produce '${beyond[0]}' output` } : { ok: true, value: true };
}

/** The organizer's spec from the analyst's saved requirements (keys file_types and name_conflicts). */
export function organizerSpec(requirements: Record<string, string>): Parsed<OrganizerSpec> {
  let spec = DEFAULT_ORGANIZER_SPEC;
  if (requirements.file_types) {
    const parsed = categoriesFromAnswer(requirements.file_types);
    if (!parsed.ok) return parsed;
    spec = { ...spec, ...parsed.value };
  }
  if (requirements.name_conflicts) {
    const parsed = conflictFromAnswer(requirements.name_conflicts);
    if (!parsed.ok) return parsed;
    spec = { ...spec, ...parsed.value };
  }
  return { ok: true, value: spec };
}

/** `Pictures (.jpg, .png); Misc (anything else)`: how criteria name the categories, read back by `parseCategories`. */
export function formatCategories(spec: Pick<OrganizerSpec, 'categories' | 'fallback'>): string {
  return [...spec.categories.map((c) => `${c.name} (${c.extensions.join(', ')})`), `${spec.fallback} (anything else)`].join('; ');
}

export function parseCategories(text: string): Pick<OrganizerSpec, 'categories' | 'fallback'> | null {
  const categories: Category[] = [];
  let fallback: string | null = null;
  for (const match of text.matchAll(/([A-Za-z][\w-]*) \(([^)]*)\)/g)) {
    if (match[2] === 'anything else') fallback = match[1]!;
    else categories.push({ name: match[1]!, extensions: match[2]!.split(', ') });
  }
  return categories.length && fallback ? { categories, fallback } : null;
}
