/**
 * The embedded stack's timers (shared/ports/timers.ts): a command posted to the run's mailbox when its time comes,
 * on this process's clock. Scheduling a name twice keeps the first. Timers live as long as the process: a restart
 * forgets them, and what they were for is found again by the run (a replan watch's failure is still waiting, and is
 * asked about again when the run is next looked at).
 */
import type { RunCommand, RunCommandInput } from '../../engine/run/commands.ts';
import type { Mailbox } from '../../ports/mailbox.ts';
import type { Timers } from '../../ports/timers.ts';

export interface LocalTimers extends Timers {
  /** Timers not yet due. */
  pending(): number;
  /** Arms again the timers a journal kept. */
  rearm(timers: readonly { runId: string; name: string; at: string; command: RunCommand }[]): void;
  close(): void;
}

/** Where timers are kept until they fire (a data directory's journal), so a restart forgets none. */
export interface TimerJournal {
  scheduled(timer: { key: string; runId: string; name: string; at: string; command: RunCommand }): void;
  fired(key: string): void;
}

export function createLocalTimers(
  mailbox: Mailbox,
  clock: () => Date = () => new Date(),
  journal?: TimerJournal,
): LocalTimers {
  const waiting = new Map<string, NodeJS.Timeout>();
  const arm = (runId: string, name: string, at: string, command: RunCommand, kept: boolean): void => {
    const key = `${runId}#${name}`;
    if (waiting.has(key)) return;
    if (!kept) journal?.scheduled({ key, runId, name, at, command });
    const { at: _at, ...input } = command;
    const delay = Math.max(0, Date.parse(at) - clock().getTime());
    const timer = setTimeout(() => {
      waiting.delete(key);
      void mailbox.send(runId, input as RunCommandInput).then(() => journal?.fired(key));
    }, delay);
    timer.unref();
    waiting.set(key, timer);
  };
  return {
    async schedule(runId, name, at, command: RunCommand) {
      arm(runId, name, at, command, false);
    },
    rearm(timers) {
      for (const { runId, name, at, command } of timers) arm(runId, name, at, command, true);
    },
    pending: () => waiting.size,
    close() {
      for (const timer of waiting.values()) clearTimeout(timer);
      waiting.clear();
    },
  };
}
