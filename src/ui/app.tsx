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

  // The live frame must fit the terminal or ink redraws the whole screen on every change.
  useEffect(() => {
    board.setRows(Math.max(3, Math.min(12, rows - 16 - memberCount)));
  }, [board, rows, memberCount]);

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
        <Header model={session.modelLabel} dir={session.where} team={teamView.team} lead={teamView.lead} auto={session.autoAnswer} spent={teamView.spend['']} />
        <BoardPanel view={boardView} width={width - 4} />
        <TeamPanel members={teamView.members} tasks={boardView.byId} lead={teamView.lead} spend={teamView.spend} rejected={teamView.rejected ?? {}} starting={teamView.starting ?? false} />
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
