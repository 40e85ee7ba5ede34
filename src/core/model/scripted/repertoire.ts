/**
 * What the offline team can really build, and how it reads a person's answers into a spec. The
 * offline model implements only these; for anything else it says so instead of writing a stub.
 */

export type Language = 'python' | 'javascript';
export type ProgramKind = 'organizer' | 'wordcount';

/** The line the offline team ends a pipeline with when a requirement is outside its repertoire. */
/** How to leave the offline model, for every line that says what it cannot do. */
export const REAL_MODEL_HINT = 'set ANTHROPIC_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL, to run it on a model';

export const OFFLINE_CANNOT = `the offline model cannot implement this requirement — ${REAL_MODEL_HINT}`;

export function detectLanguage(text: string): Language {
  return /\b(javascript|node(\.js)?|typescript|js)\b/i.test(text) && !/\bpython\b/i.test(text) ? 'javascript' : 'python';
}

const ORGANIZE_VERB = /\b(organi[sz](e|es|ing|er)|sort(s|ing)?|tid(y|ies)|clean(s)? ?up|arrang(e|es|ing))\b/i;
const TYPE_WORDS = /\b(by (file )?(type|extension|kind|category)|file[- ]types?|extensions?|into (sub)?folders)\b/i;
const COUNT_VERB = /\b(count(s|er|ing)?|wc)\b/i;
/** Things the word counter does not do: "count HN titles", "how often each word appears", "every file of a folder". */
const NOT_WORDCOUNT =
  /\b(hn|hacker ?news|titles?|urls?|web|https?|pages?|scrap\w*|frequenc\w*|how often|each word|every word|per (line|word|file|paragraph)|most common|top \d+|unique|distinct|csv|json|html|xml|database|git|repo\w*|commits?|code|every file|all files|folders?|director(y|ies)|recursive\w*|ignor\w*|exclud\w*|except|without|only|sort\w*|longest|shortest|average|histogram|chart|sentences?|paragraphs?|syllables?|languages?)\b/i;
/** Things the organizer does not do: lines, playlists, mail; by date or size; recursion, deletion, undo. */
const NOT_ORGANIZER =
  /\b(lines?|playlists?|songs?|e-?mails?|inbox|by (date|size|name|age|year|month)|sizes?|dates?|ages?|older|newer|days?|weeks?|months?|years?|recursive\w*|(?:in|inside|within|including|and|all|every) (?:its |the |all )?sub-?(?:folders?|director\w*)|nested|delet\w*|remov\w*|duplicat\w*|undo|revert|renam\w*|schedul\w*|watch\w*|monitor\w*|daemon|cron|gui|window|web|upload\w*|sync\w*|cloud|backup|compress\w*|zip|database|rows?|csv|json|bookmarks?|contacts?|tabs?|photos? by|exif)\b/i;
const OTHER_LANGUAGES = 'go|golang|rust|typescript|java|kotlin|scala|c\\+\\+|cpp|c#|csharp|c|ruby|php|perl|swift|haskell|elixir|erlang|lua|julia|dart|bash|shell|powershell';
/** "a Go program", "in Rust", "using TypeScript", or an answer that is just the language's name. */
const NAMED_LANGUAGE = new RegExp(`(?:\\b(?:in|with|use|using|a|an|write|written in|language:?)\\s+|^\\s*)(${OTHER_LANGUAGES})(?=[\\s.,;!)]|$)`, 'i');

/** The language the text names that the offline engineer cannot write (it writes Python and JavaScript), if any. */
export function otherLanguage(text: string): string | null {
  return NAMED_LANGUAGE.exec(text)?.[1] ?? null;
}

/** The program of the repertoire the requirement clearly asks for, or null. Near misses are null. */
export function kindOf(requirement: string): ProgramKind | null {
  const text = requirement.toLowerCase();
  if (otherLanguage(requirement)) return null;
  if (ORGANIZE_VERB.test(text) && !NOT_ORGANIZER.test(text)) {
    if (/\bdownloads\b/.test(text)) return 'organizer';
    if (/\b(folders?|director(y|ies))\b/.test(text) && TYPE_WORDS.test(text)) return 'organizer';
  }
  // "counts the words in a text file", or just "a word counter" (the program's name says what it reads).
  if (COUNT_VERB.test(text) && /\bwords?\b/.test(text) && /\b(files?|text|stdin|standard input|input)\b|\bwords?[ -]count(er)?\b/.test(text) && !NOT_WORDCOUNT.test(text)) {
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
const KNOWN_EXTENSIONS = new Set(KNOWN.flatMap((entry) => entry.extensions));
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

/** Words that make a list in parentheses something other than extensions ("under 1 MB", "older than a week"). */
const NOT_EXTENSIONS = /^(under|over|above|below|and|or|than|more|less|mb|kb|gb|tb|bytes?|days?|weeks?|months?|years?|old|new|files?|the|a|an|any|all|etc|e\.g|i\.e)$/i;

/** Extensions from a list such as `jpg, .png *.gif` — or null when it lists something else. */
function extensionList(list: string): string[] | null {
  const tokens = list.split(/[,\s/]+/).filter(Boolean);
  if (tokens.length === 0) return null;
  const ok = tokens.every((token) => /^\*?\.?[a-z0-9]{1,8}$/i.test(token) && !/^\d+$/.test(token.replace(/^\*?\./, '')) && !NOT_EXTENSIONS.test(token));
  return ok ? tokens.map(extension) : null;
}

/**
 * Reads an answer about file categories: explicit groups (`Images (jpg, png), Documents (pdf)`,
 * `Photos: jpg, png; Docs: pdf` or `Images for jpg and png, Documents for pdf`), or known folder
 * names (`Pictures and Misc only`), and where everything else goes. A group that does not list extensions, an unknown folder name without
 * extensions, or an extension in two folders makes it give up rather than guess.
 */
export function categoriesFromAnswer(answer: string): Parsed<Pick<OrganizerSpec, 'categories' | 'fallback'>> {
  const categories: Category[] = [];
  let fallback: string | null = null;
  const elsewhere =
    /\b(?:anything|everything) else\b[^.;]*?\b(?:to|into|in)\s+(?:an?\s+|the\s+)?["']?([A-Za-z][\w-]*)/i.exec(answer) ??
    /\b(?:others?|the rest|rest|remaining(?: files)?)\s*(?::|->|→|=|\bto\b|\binto\b|\bin\b)\s*["']?([A-Za-z][\w-]*)/i.exec(answer);
  if (elsewhere) fallback = titleCase(elsewhere[1]!);
  const groups = [
    ...answer.matchAll(/([A-Za-z][\w-]*)\s*\(([^)]*)\)/g),
    ...answer.matchAll(/([A-Za-z][\w-]*)\s*:\s*([^;:()]+?)(?=;|\.\s|\.$|$|\s+(?:and\s+)?(?:anything|everything) else)/gi),
    // `Images for jpg and png, Documents for pdf`: a folder's name, then its extensions, the last two
    // perhaps joined by a word; each list runs to the next `<Name> for`. "for" is a common word
    // ("Use Pictures for now"), so this form takes a capitalised name and extensions of KNOWN's only.
    ...[...answer.matchAll(/\b([A-Z][\w-]*)\s+for\s+([^;:()]+?)(?=,?\s*(?:and\s+)?\b[A-Za-z][\w-]*\s+for\s|[,;]?\s*(?:and\s+)?(?:anything|everything) else|;|\.\s|\.$|$)/g)]
      .map((match) => [match[0], match[1]!, match[2]!.replace(/\s+(?:and|or)\s+/g, ', ')])
      .filter(([, name, list]) => !NOT_NAMES.test(name!) && extensionList(list!)?.every((ext) => KNOWN_EXTENSIONS.has(ext))),
  ];
  for (const match of groups) {
    const name = titleCase(match[1]!);
    if (FALLBACK_NAMES.test(name) || /^(group|groups|use|answer)$/i.test(name) || name === fallback) continue;
    const extensions = extensionList(match[2]!);
    if (!extensions) return { ok: false, reason: `it cannot tell which files go into '${name}': '${match[2]!.trim()}' is not a list of file extensions` };
    categories.push({ name, extensions });
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
  const seen = new Map<string, string>();
  for (const category of categories) {
    for (const ext of category.extensions) {
      const other = seen.get(ext);
      if (other && other !== category.name) return { ok: false, reason: `the answer puts ${ext} in both ${other} and ${category.name}` };
      seen.set(ext, category.name);
    }
  }
  return { ok: true, value: { categories, fallback: fallback ?? 'Other' } };
}

/** Reads an answer about name conflicts: skip (and warn), a numbered name for the new file, or overwrite. */
export function conflictFromAnswer(answer: string): Parsed<Pick<OrganizerSpec, 'conflict' | 'warn'>> {
  const text = answer.toLowerCase();
  if (/renam\w* (?:the )?(?:old|existing|original|older)|(?:old|existing|original) (?:one|file)\w* (?:gets|is|should be) renamed/.test(text)) {
    return { ok: false, reason: `it can only rename the incoming file, not the existing one ('${answer.slice(0, 80)}')` };
  }
  if (/\bskip|leave (it|them|the (new )?file)|don't move|do not move|\bignore/.test(text)) {
    return { ok: true, value: { conflict: 'skip', warn: /warn|report|print|tell|log|message|mention/.test(text) } };
  }
  if (/suffix|number|\(1\)|keep both|renam|never overwrite|don't overwrite|do not overwrite|not overwrite/.test(text)) {
    return { ok: true, value: { conflict: 'suffix', warn: false } };
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
