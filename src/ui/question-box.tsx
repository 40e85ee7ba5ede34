import { Box, Text } from 'ink';
import type { PendingQuestion } from '../core/lead/session.js';
import { printable } from '../frontend/printable.js';

export function QuestionBox({ questions, auto }: { questions: readonly PendingQuestion[]; auto: boolean }) {
  const [first, ...rest] = questions;
  if (!first) return null;
  return (
    <Box flexDirection="column" borderStyle="double" borderColor="magenta" paddingX={1}>
      <Text bold color="magenta">
        {/* Named as the activity line names it: by pipeline, or by task for a general one. */}
        {first.from} asks{first.pipeline != null ? ` (pipeline #${first.pipeline})` : first.task ? ` (task #${first.task})` : ''}: {printable(first.question)}
      </Text>
      <Text dimColor>
        {auto ? 'the simulated user is answering — or type your own answer' : 'type the answer and press Enter'}
        {rest.length ? ` · ${rest.length} more waiting${moreHint(first, rest)}` : ''}
      </Text>
    </Box>
  );
}

/** How to answer one of the others first: `#N answer` names its pipeline (answer.ts, answerTyped). */
function moreHint(first: PendingQuestion, rest: readonly PendingQuestion[]): string {
  // `#N` answers pipeline N's first question: the front one's pipeline is not a way to reach another.
  const pipelines = [...new Set(rest.flatMap((question) => (question.pipeline != null && question.pipeline !== first.pipeline ? [question.pipeline] : [])))];
  return pipelines.length ? ` (${pipelines.map((id) => `#${id}`).join(', ')}: '#${pipelines[0]} <answer>' answers pipeline #${pipelines[0]}'s)` : '';
}
