/**
 * The embedded stack's run mailboxes (shared/ports/mailbox.ts), shaped as the deployed SQS FIFO queue is: one queue
 * per run (the message group), its commands taken in order in batches, one batch of a run at a time, runs side by
 * side. A batch that fails is taken again after a pause (its commands are decided again: a repeat decides nothing
 * twice), as SQS redelivers a batch whose handler failed. A failure of the platform (a throttle, a timeout) is never
 * fatal: the batch is taken again, the pause capped, for as long as it lasts. Any other failure is tried `tries`
 * times; then its senders are told, and its letters stay in the journal for the next start (a dead letter).
 */
import type { RunCommandInput } from '../../engine/run/commands.ts';
import type { Reply } from '../../engine/run/decision.ts';
import { isTransientPlatformError } from '../../errors.ts';
import { DecisionPendingError, type Mailbox } from '../../ports/mailbox.ts';

/** Answers kept for the status of commands asked by id (a status is read soon after its 202, or not at all). */
const ANSWERS_KEPT = 10_000;

export interface LocalMailboxOptions {
  /** The decider's shell: a batch of one run's commands in, an answer per command out. */
  readonly handle: (runId: string, commands: readonly RunCommandInput[]) => Promise<Reply[]>;
  /** Commands taken together at most (SQS FIFO's batch is 10). */
  readonly batchSize?: number;
  /** Pause before a failed batch is taken again, doubling per try up to `maxRetryMs`. */
  readonly retryMs?: number;
  readonly maxRetryMs?: number;
  readonly tries?: number;
  readonly onError?: (error: unknown, runId: string) => void;
  /** Where letters are kept until their batch is decided (a data directory's journal): nothing is lost on a crash. */
  readonly journal?: {
    posted(letter: { id: string; runId: string; command: RunCommandInput }): void;
    done(ids: readonly string[]): void;
  };
}

export interface LocalMailbox extends Mailbox {
  /** Resolves once every queue is empty and no batch is being handled. */
  idle(): Promise<void>;
  /** Commands waiting or being handled, over all runs. */
  pending(): number;
  /** Posts again the letters a journal kept (they are in it already). */
  repost(letters: readonly { id: string; runId: string; command: RunCommandInput }[]): void;
  /** Takes no batch more and resolves once the batches under way have ended; letters not taken stay journalled. */
  close(): Promise<void>;
}

interface Letter {
  readonly id: string;
  readonly command: RunCommandInput;
  readonly answer: (reply: Reply) => void;
  readonly fail: (error: unknown) => void;
}

interface Queue {
  readonly letters: Letter[];
  draining: boolean;
}

export function createLocalMailbox(options: LocalMailboxOptions): LocalMailbox {
  const batchSize = options.batchSize ?? 10;
  const retryMs = options.retryMs ?? 50;
  const tries = options.tries ?? 8;
  const maxRetryMs = options.maxRetryMs ?? 2_000;
  const queues = new Map<string, Queue>();
  let closed = false;
  let waiters: (() => void)[] = [];
  let inFlight = 0;

  // Closed, the letters left wait for the next start (journalled): only the batches under way are awaited.
  const quiet = () =>
    inFlight === 0 && (closed || [...queues.values()].every((q) => q.letters.length === 0 && !q.draining));
  const wake = () => {
    if (!quiet()) return;
    const ready = waiters;
    waiters = [];
    for (const resolve of ready) resolve();
  };

  async function drain(runId: string, queue: Queue): Promise<void> {
    queue.draining = true;
    try {
      while (queue.letters.length > 0 && !closed) {
        const batch = queue.letters.splice(0, batchSize);
        inFlight += batch.length;
        try {
          const replies = await handleWithTries(runId, batch);
          options.journal?.done(batch.map((letter) => letter.id));
          for (const [i, letter] of batch.entries()) letter.answer(replies[i] ?? { ok: true });
        } catch (error) {
          options.onError?.(error, runId);
          for (const letter of batch) letter.fail(error);
        } finally {
          inFlight -= batch.length;
        }
        // Other runs' batches get their turn between two of this run's.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      queue.draining = false;
      if (queue.letters.length === 0) queues.delete(runId);
      wake();
    }
  }

  async function handleWithTries(runId: string, batch: readonly Letter[]): Promise<Reply[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await options.handle(
          runId,
          batch.map((letter) => letter.command),
        );
      } catch (error) {
        if (closed || (attempt >= tries && !isTransientPlatformError(error))) throw error;
        const pause = Math.min(retryMs * 2 ** Math.min(attempt - 1, 20), maxRetryMs);
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  let sequence = 0;
  /** `given`: a journalled letter posted again (not journalled twice); `named`: a new letter under the asker's id. */
  const post = (runId: string, command: RunCommandInput, given?: string, named?: string): Promise<Reply> =>
    new Promise((answer, fail) => {
      if (closed) {
        fail(new Error('the mailbox is closed'));
        return;
      }
      const id = given ?? named ?? `${Date.now().toString(36)}-${(sequence++).toString(36)}`;
      if (given === undefined) options.journal?.posted({ id, runId, command });
      let queue = queues.get(runId);
      if (queue === undefined) {
        queue = { letters: [], draining: false };
        queues.set(runId, queue);
      }
      queue.letters.push({ id, command, answer, fail });
      if (!queue.draining) void drain(runId, queue);
    });

  // Asks by id: the decision under way (a retry waits on it, not a second letter), then its answer, kept for the
  // status of a command its sender stopped waiting for (the oldest forgotten past ANSWERS_KEPT).
  const asked = new Map<string, Promise<Reply>>();
  const answers = new Map<string, Reply>();
  const keep = (id: string, reply: Reply): void => {
    answers.set(id, reply);
    if (answers.size > ANSWERS_KEPT) answers.delete(answers.keys().next().value as string);
  };
  const ask = (runId: string, command: RunCommandInput, id: string | undefined): Promise<Reply> => {
    if (id === undefined) return post(runId, command);
    const known = answers.get(id);
    if (known !== undefined) return Promise.resolve(known);
    let decision = asked.get(id);
    if (decision === undefined) {
      decision = post(runId, command, undefined, id);
      asked.set(id, decision);
      decision.then(
        (reply) => keep(id, reply),
        () => undefined,
      );
      decision.finally(() => asked.delete(id)).catch(() => undefined);
    }
    return decision;
  };

  return {
    async send(runId, command) {
      // Accepted once queued: the sender does not wait for the decision, and hears of no failure of it.
      post(runId, command).catch(() => undefined);
    },
    async ask(runId, command, options = {}) {
      const decision = ask(runId, command, options.id);
      if (options.waitMs === undefined) return decision;
      const id = options.id ?? 'unnamed';
      let timer: NodeJS.Timeout | undefined;
      const pending = new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new DecisionPendingError(runId, id)), options.waitMs);
      });
      try {
        return await Promise.race([decision, pending]);
      } finally {
        clearTimeout(timer);
      }
    },
    answer: async (id) => answers.get(id),
    repost(letters) {
      for (const { id, runId, command } of letters) post(runId, command, id).catch(() => undefined);
    },
    idle: () =>
      new Promise((resolve) => {
        if (quiet()) resolve();
        else waiters.push(resolve);
      }),
    pending: () => inFlight + [...queues.values()].reduce((sum, q) => sum + q.letters.length, 0),
    close() {
      closed = true;
      return new Promise((resolve) => {
        if (quiet()) resolve();
        else waiters.push(resolve);
      });
    },
  };
}
