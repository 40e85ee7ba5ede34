import type { HandoffData } from '../../stages/handoff.js';
import { callsOf, type Decision, lastCall, type ToolCall } from './conversation.js';
import {
  categoriesFromAnswer,
  conflictFromAnswer,
  DEFAULT_ORGANIZER_SPEC,
  detectLanguage,
  formatCategories,
  kindOf,
  type OrganizerSpec,
  type ProgramKind,
} from './repertoire.js';

interface Topic {
  key: string;
  question: string;
  /** What the program does when the question goes unanswered. */
  default: string;
}

/** The questions worth asking for a requirement: what it leaves open that the program depends on. */
export function topicsFor(requirement: string): Topic[] {
  const kind = kindOf(requirement);
  if (kind === 'organizer') {
    return [
      {
        key: 'file_types',
        question: 'Which file types should be grouped together, and what should the folders be called?',
        default: 'Images, Documents, Archives, Audio, Video, Installers, Code; anything else in Other',
      },
      {
        key: 'name_conflicts',
        question: 'What should happen when a file with the same name already exists in the target folder?',
        default: "keep both: the new file gets a numbered name like 'report (1).pdf'",
      },
    ];
  }
  if (kind === 'wordcount') {
    const topics: Topic[] = [
      {
        key: 'inputs_outputs',
        question: 'What input does the program take, and what output do you expect?',
        default: 'the file named as the first argument, or standard input; prints lines, words and characters',
      },
    ];
    if (!/python|javascript|node|typescript/i.test(requirement)) {
      topics.push({ key: 'language', question: 'Which language and runtime should it use?', default: 'Python 3, standard library only' });
    }
    return topics;
  }
  return [];
}

type CriterionInput = { criterion: string; verify: string };

function conflictCriterion(spec: OrganizerSpec): CriterionInput {
  const verify = 'organize a scratch folder whose target folder already holds a file of the same name';
  if (spec.conflict === 'skip') {
    return {
      criterion: `A file whose name already exists in the target folder is left where it is${spec.warn ? ', with a warning naming it' : ''}`,
      verify,
    };
  }
  if (spec.conflict === 'overwrite') return { criterion: 'A file whose name already exists in the target folder replaces it', verify };
  return { criterion: "A file whose name already exists in the target folder is kept under a numbered name like 'report (1).pdf'; nothing is overwritten", verify };
}

/** The acceptance criteria the offline analyst records: one per behaviour the answers fixed. */
export function criteriaFor(kind: ProgramKind | null, requirement: string, answers: Record<string, string>): CriterionInput[] {
  if (kind === 'organizer') {
    let spec = DEFAULT_ORGANIZER_SPEC;
    const categories = answers.file_types ? categoriesFromAnswer(answers.file_types) : null;
    if (categories?.ok) spec = { ...spec, ...categories.value };
    const conflict = answers.name_conflicts ? conflictFromAnswer(answers.name_conflicts) : null;
    if (conflict?.ok) spec = { ...spec, ...conflict.value };
    const criteria: CriterionInput[] = [];
    if (categories && !categories.ok) criteria.push({ criterion: `Files are grouped as the person answered: ${answers.file_types}`, verify: 'read the answer and check the folders' });
    else {
      criteria.push({
        criterion: `Each top-level file is moved into the folder for its type: ${formatCategories(spec)}`,
        verify: 'organize a scratch folder holding one file of each type; each lands in its folder and no other folder appears',
      });
    }
    if (conflict && !conflict.ok) criteria.push({ criterion: `Name conflicts are handled as the person answered: ${answers.name_conflicts}`, verify: 'read the answer' });
    else criteria.push(conflictCriterion(spec));
    criteria.push({ criterion: '--dry-run prints what would move and moves nothing', verify: 'run with --dry-run on a scratch folder; every file stays' });
    return criteria;
  }
  if (kind === 'wordcount') {
    return [
      { criterion: 'Prints the line, word and character counts of the file named as the first argument', verify: "run it on a file holding 'one two three\\nfour five\\n': 2 lines, 5 words, 24 characters" },
      { criterion: 'Reads standard input when no file is given', verify: 'pipe the same text in: the same counts' },
    ];
  }
  // Within add_acceptance_criterion's 500 characters: a long requirement is cut, not sent to be refused again and again.
  const asked = requirement.replace(/\s+/g, ' ').trim();
  const room = 500 - 'The program does what was asked: '.length;
  return [{ criterion: `The program does what was asked: ${asked.length > room ? `${asked.slice(0, room - 1)}…` : asked}`, verify: 'run it on representative input and compare with the request' }];
}

/** The analyst: ask what is open, save what was learned (from the real answers), record criteria, then complete. */
export function analystTurn(handoff: HandoffData, calls: readonly ToolCall[]): Decision {
  const requirement = handoff.requirement;
  const kind = kindOf(requirement);
  const asked = callsOf(calls, 'ask_clarifying_question');
  const topics = topicsFor(requirement);
  const stopAsking = asked.some((call) => call.result?.isError || /already asked|proceed/i.test(call.result?.content ?? ''));
  if (!stopAsking && asked.length < topics.length) {
    const topic = topics[asked.length]!;
    // Said before each question, not the same words each time.
    const text = asked.length === 0 ? 'I need one detail before writing requirements.' : asked.length === topics.length - 1 ? 'A last detail, then I write the requirements.' : 'One more detail.';
    return { text, calls: [{ name: 'ask_clarifying_question', input: { question: topic.question } }] };
  }
  const last = lastCall(calls);
  if (callsOf(calls, 'save_requirement').length === 0 || (last?.name === 'complete_requirements_analysis' && last.result?.isError)) {
    const answers: Record<string, string> = {};
    asked.forEach((call, index) => {
      const answer = call.result?.content;
      if (answer?.trim() && !call.result?.isError && !/already asked|^no answer/i.test(answer)) answers[topics[index]?.key ?? `answer_${index + 1}`] = answer.trim();
    });
    const language = detectLanguage(`${answers.language ?? ''} ${requirement}`);
    const saves: Decision['calls'] = [
      { name: 'save_requirement', input: { key: 'goal', value: requirement } },
      {
        name: 'save_requirement',
        input: { key: 'language', value: answers.language ?? (language === 'python' ? 'Python 3, standard library only' : 'JavaScript (Node.js), no dependencies') },
      },
    ];
    for (const [key, value] of Object.entries(answers)) if (key !== 'language') saves.push({ name: 'save_requirement', input: { key, value } });
    // A question left unanswered is an assumption, and the board says so.
    for (const topic of topics) {
      if (answers[topic.key] === undefined && topic.key !== 'language') {
        saves.push({ name: 'save_requirement', input: { key: `${topic.key}_assumed`, value: `not answered; the default is used (${topic.default})` } });
      }
    }
    if (kind === 'organizer') {
      saves.push({ name: 'save_requirement', input: { key: 'interface', value: 'Command line: takes the folder as an optional argument (default ~/Downloads) and a --dry-run flag; prints one line per moved file.' } });
    }
    for (const criterion of criteriaFor(kind, requirement, answers)) saves.push({ name: 'add_acceptance_criterion', input: criterion });
    const requirements = saves.filter((call) => call.name === 'save_requirement').length;
    const criteria = saves.length - requirements;
    return { text: `Recording ${requirements} requirement${requirements === 1 ? '' : 's'} and ${criteria} acceptance criteri${criteria === 1 ? 'on' : 'a'}.`, calls: saves };
  }
  const saved = callsOf(calls, 'save_requirement').filter((call) => !call.result?.isError);
  const keys = [...new Set(saved.map((call) => String(call.input.key)))];
  const criteria = callsOf(calls, 'add_acceptance_criterion').filter((call) => !call.result?.isError).length;
  return {
    text: 'The requirements are complete.',
    calls: [
      {
        name: 'complete_requirements_analysis',
        input: {
          summary: `${keys.length} requirement${keys.length === 1 ? '' : 's'} (${keys.join(', ')}) and ${criteria} acceptance criteri${criteria === 1 ? 'on' : 'a'} from ${asked.length} clarifying question${asked.length === 1 ? '' : 's'}.`,
        },
      },
    ],
  };
}
