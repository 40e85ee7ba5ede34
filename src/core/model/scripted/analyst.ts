import { isOrganizer } from './programs.js';
import { callsOf, type Decision, lastCall, type ToolCall } from './conversation.js';

interface Topic {
  key: string;
  question: string;
}

/** The questions worth asking for a requirement: what it leaves open, at most two. */
export function topicsFor(requirement: string): Topic[] {
  if (isOrganizer(requirement)) {
    return [
      { key: 'file_types', question: 'Which file types should be grouped together, and what should the folders be called?' },
      { key: 'name_conflicts', question: 'What should happen when a file with the same name already exists in the target folder?' },
    ];
  }
  const topics: Topic[] = [{ key: 'inputs_outputs', question: 'What input does the program take, and what output do you expect?' }];
  if (!/python|javascript|node|typescript/i.test(requirement)) {
    topics.push({ key: 'language', question: 'Which language and runtime should it use?' });
  }
  return topics;
}

/** The analyst: ask what is open, save what was learned (from the real answers), then complete. */
export function analystTurn(requirement: string, calls: readonly ToolCall[]): Decision {
  const asked = callsOf(calls, 'ask_clarifying_question');
  const topics = topicsFor(requirement);
  const stopAsking = asked.some((call) => call.result?.isError || /already asked|proceed/i.test(call.result?.content ?? ''));
  if (!stopAsking && asked.length < topics.length) {
    const topic = topics[asked.length]!;
    return { text: `I need one detail before writing requirements.`, calls: [{ name: 'ask_clarifying_question', input: { question: topic.question } }] };
  }
  const last = lastCall(calls);
  if (callsOf(calls, 'save_requirement').length === 0 || (last?.name === 'complete_requirements_analysis' && last.result?.isError)) {
    const language = /javascript|node|typescript/i.test(requirement) && !/python/i.test(requirement) ? 'javascript' : 'python';
    const saves: Decision['calls'] = [
      { name: 'save_requirement', input: { key: 'goal', value: requirement } },
      { name: 'save_requirement', input: { key: 'language', value: language === 'python' ? 'Python 3, standard library only' : 'JavaScript (Node.js), no dependencies' } },
    ];
    asked.forEach((call, index) => {
      const answer = call.result?.content;
      if (answer && !call.result?.isError && !/already asked/i.test(answer)) {
        saves.push({ name: 'save_requirement', input: { key: topics[index]?.key ?? `answer_${index + 1}`, value: answer } });
      }
    });
    if (isOrganizer(requirement)) {
      saves.push({ name: 'save_requirement', input: { key: 'interface', value: 'Command line: takes the folder as an optional argument (default ~/Downloads) and a --dry-run flag; prints one line per moved file.' } });
    }
    return { text: `Recording ${saves.length} requirements.`, calls: saves };
  }
  const saved = callsOf(calls, 'save_requirement').filter((call) => !call.result?.isError);
  const keys = [...new Set(saved.map((call) => String(call.input.key)))];
  return {
    text: 'The requirements are complete.',
    calls: [{ name: 'complete_requirements_analysis', input: { summary: `${keys.length} requirements (${keys.join(', ')}) from ${asked.length} clarifying question(s).` } }],
  };
}
