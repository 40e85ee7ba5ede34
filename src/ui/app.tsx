import { Box, Text, useApp, useStdout } from 'ink';
import Spinner from 'ink-spinner';
import { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import type { LeadApi, PendingQuestion } from '../core/lead/lead-api.js';
import { indentContinuation } from '../frontend/activity.js';
import { type CommandIO, runLine, splitCommands } from '../frontend/commands.js';
import { ActivityLog } from './activity-log.js';
import { BoardPanel } from './board-panel.js';
import { Header } from './header.js';
import { InputLine } from './input-line.js';
import { QuestionBox } from './question-box.js';
import { TeamPanel } from './team-panel.js';
import type { ActivityFeed, BoardStore, QuestionStore, Store, TeamStore } from './stores.js';

export interface AppProps {
  session: LeadApi;
  feed: ActivityFeed;
  board: BoardStore;
  team: TeamStore;
  questions: QuestionStore;
  /** Shuts the team down; the app unmounts when it resolves. */
  quit(): Promise<void>;
}

function useStore<T>(store: Store<T>): T {
  return useSyncExternalStore(store.subscribe, store.get, store.get);
}

/** The REPL screen: log above, live panels and the prompt below. Layout only; state lives in the stores. */
export function App({ session, feed, board, team, questions, quit }: AppProps) {
  const { exit } = useApp();
  const { stdout } = useStdout();
  const items = useStore(feed);
  const boardView = useStore(board);
  const teamView = useStore(team);
  const waiting = useStore(questions);
  const [thinking, setThinking] = useState(0);
  const [quitting, setQuitting] = useState<false | 'running' | 'done'>(false);
  const width = stdout.columns || 100;
  const rows = stdout.rows || 40;
  const memberCount = teamView.members.length;
  const layout = frameLayout(rows, memberCount, waiting.length > 0);

  useEffect(() => {
    board.setRows(layout.taskRows);
  }, [board, layout.taskRows]);

  const leaving = useRef(false);
  const leave = () => {
    if (leaving.current) return;
    leaving.current = true;
    setQuitting('running');
    feed.push('shutting the team down…', 'info');
    void quit().finally(() => setQuitting('done'));
  };

  // The app ends once the frame saying "bye" is committed, so the screen ends on it rather than on a
  // spinner: an exit queued beside the state change ran first on a busy machine.
  useEffect(() => {
    if (quitting === 'done') exit();
  }, [quitting, exit]);

  // SIGTERM (kill, a service manager) and a SIGINT sent to the process (kill -INT, `timeout -s INT`; the
  // keyboard's Ctrl+C is a key here, not a signal) quit as /quit does: the team shut down, the board
  // released. A second one finds no handler and ends the process at once. (SIGHUP, the terminal gone, is
  // run-ink's: there is no screen left to show the quitting on.)
  const leaveRef = useRef(leave);
  leaveRef.current = leave;
  useEffect(() => {
    const onTerm = () => {
      feed.push('terminated', 'info');
      leaveRef.current();
    };
    const onInt = () => {
      feed.push('interrupted', 'info');
      leaveRef.current();
    };
    process.once('SIGTERM', onTerm);
    process.once('SIGINT', onInt);
    return () => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
    };
  }, [feed]);

  const io: CommandIO = {
    session,
    view: feed.view,
    print: (text, tone = 'info') => feed.push(text, tone),
    askLead: async (text) => {
      setThinking((n) => n + 1);
      try {
        return await session.ask(text);
      } finally {
        setThinking((n) => n - 1);
      }
    },
  };

  // The question in front when the person began the line: what a plain line answers, even if
  // another question is in front by the time it is sent (undefined: not known, the one then in front).
  const begunFor = useRef<PendingQuestion | null | undefined>(undefined);
  const submit = (text: string) => {
    const begun = begunFor.current;
    begunFor.current = undefined;
    // Commands typed ahead in one input run one after the other, each shown as typed.
    void (async () => {
      for (const line of splitCommands(text)) {
        feed.push(`› ${indentContinuation(line)}`, 'command');
        if ((await runLine(line, io, begun)) === 'quit') return leave();
      }
    })();
  };

  const question = waiting[0];
  const placeholder = question ? `answer ${question.from}…` : 'a requirement for the lead, or /help';
  return (
    <>
      <ActivityLog items={items} />
      <Box flexDirection="column" width={width}>
        {layout.header ? <Header model={session.modelLabel} dir={session.where} team={teamView.team} lead={teamView.lead} auto={session.autoAnswer} spent={teamView.spend['']} /> : null}
        <BoardPanel view={boardView} width={width - 4} pipelineLines={layout.pipelineLines} />
        <TeamPanel members={teamView.members} tasks={boardView.byId} lead={teamView.lead} spend={teamView.spend} rejected={teamView.rejected ?? {}} starting={teamView.starting ?? false} rows={layout.memberRows} />
        <QuestionBox questions={waiting} auto={session.autoAnswer} />
        {thinking > 0 ? (
          <Text color="cyan">
            <Spinner type="dots" /> lead is thinking…
          </Text>
        ) : null}
        {quitting === 'done' ? <Text color="green">bye</Text> : null}
        {quitting === 'running' ? (
          <Text color="yellow">
            <Spinner type="dots" /> shutting the team down…
          </Text>
        ) : null}
        {quitting ? null : (
          <InputLine onSubmit={submit} onQuit={leave} onHint={(text) => feed.push(text, 'info')} onBegin={(begun) => (begunFor.current = begun ? (waiting[0] ?? null) : undefined)} placeholder={placeholder} active={!quitting} />
        )}
      </Box>
    </>
  );
}

/**
 * How the live frame below the log is shared out on a terminal of `rows`: it keeps to two thirds of
 * them, so the log above keeps a third (8 rows of 24) and a command's output is seen, and a frame as
 * tall as the terminal would make ink redraw the whole screen on every change. The header goes under
 * 20 rows; the team's members and the board's tasks share what the header, the prompt, the line
 * under the panels ("lead is thinking…"), the panels' borders and titles, the pipelines' lines and a
 * question (its box, a question of two lines) leave, two tasks at least where there is room.
 */
export function frameLayout(rows: number, members: number, asking: boolean): { header: boolean; taskRows: number; memberRows: number; pipelineLines: number } {
  const frame = Math.floor((rows * 2) / 3);
  const header = rows >= 20;
  const pipelineLines = rows >= 40 ? 2 : 1;
  const fixed = (header ? 2 : 0) + 1 + 1 + 3 + pipelineLines + 3 + (asking ? 5 : 0);
  // Two at least for a team of several: the one at work shown beside the count, not the count alone.
  const memberRows = Math.max(Math.min(2, Math.max(1, members)), Math.min(Math.max(1, members), frame - fixed - 2));
  const taskRows = Math.max(1, Math.min(12, frame - fixed - memberRows));
  return { header, taskRows, memberRows, pipelineLines };
}
