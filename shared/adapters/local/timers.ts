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
  close(): void;
}

export function createLocalTimers(mailbox: Mailbox, clock: () => Date = () => new Date()): LocalTimers {
  const waiting = new Map<string, NodeJS.Timeout>();
  return {
    async schedule(runId, name, at, command: RunCommand) {
      const key = `${runId}#${name}`;
      if (waiting.has(key)) return;
      const { at: _at, ...input } = command;
      const delay = Math.max(0, Date.parse(at) - clock().getTime());
      const timer = setTimeout(() => {
        waiting.delete(key);
        void mailbox.send(runId, input as RunCommandInput);
      }, delay);
      timer.unref();
      waiting.set(key, timer);
    },
    pending: () => waiting.size,
    close() {
      for (const timer of waiting.values()) clearTimeout(timer);
      waiting.clear();
    },
  };
}
