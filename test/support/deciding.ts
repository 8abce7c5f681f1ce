/**
 * The runs' deciders for a test that drives services or the API without the embedded stack: the real shell on the
 * test's store and run log, behind the in-process mailbox, with in-process timers. What the shell commits goes to
 * the same table the test reads.
 */
import { createLocalMailbox, type LocalMailbox } from '../../shared/adapters/local/mailbox.ts';
import { createLocalTimers, type LocalTimers } from '../../shared/adapters/local/timers.ts';
import { runSettingsOf, targetFacts } from '../../shared/composition/root.ts';
import { defaultSettings } from '../../shared/config/settings.ts';
import type { RunSettings } from '../../shared/engine/run/state.ts';
import type { Catalog } from '../../shared/plan/catalog.ts';
import type { Executions } from '../../shared/ports/executions.ts';
import type { Mailbox } from '../../shared/ports/mailbox.ts';
import type { RunLog } from '../../shared/ports/run-log.ts';
import type { Store } from '../../shared/ports/store.ts';
import { createRunShell, type RunShell } from '../../shared/services/runs/shell.ts';

export interface Deciding {
  readonly shell: RunShell;
  readonly mailbox: LocalMailbox;
  readonly timers: LocalTimers;
  close(): void;
}

export interface DecidingOptions {
  readonly store: Store;
  readonly runLog: RunLog;
  readonly executions: Executions;
  readonly catalog: Catalog;
  readonly clock?: () => Date;
  readonly settings?: Partial<RunSettings>;
}

export function decidingFor(options: DecidingOptions): Deciding {
  const clock = options.clock ?? (() => new Date());
  let box: Mailbox | undefined;
  const late: Mailbox = {
    send: (runId, command) => (box as Mailbox).send(runId, command),
    ask: (runId, command, options) => (box as Mailbox).ask(runId, command, options),
    answer: (id) => (box as Mailbox).answer(id),
  };
  const timers = createLocalTimers(late, clock);
  const shell = createRunShell({
    store: options.store,
    runLog: options.runLog,
    executions: options.executions,
    timers,
    mailbox: late,
    clock,
    settings: { ...runSettingsOf(defaultSettings()), ...options.settings },
    targets: targetFacts(options.catalog),
  });
  const mailbox = createLocalMailbox({ handle: shell.handle, retryMs: 5 });
  box = mailbox;
  return {
    shell,
    mailbox,
    timers,
    close() {
      void mailbox.close();
      timers.close();
    },
  };
}
