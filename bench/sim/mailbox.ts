/**
 * The run mailboxes of the simulated world, with the semantics of the embedded one (shared/adapters/local/mailbox.ts)
 * and of the SQS FIFO queue it stands for: one queue per run (the message group), its commands taken in order in
 * batches, one batch of a run at a time, runs side by side; a batch whose handling failed is taken again after a
 * pause (as SQS redelivers it once its visibility timeout passes), by whichever shell the queue hands it to. Unlike
 * the embedded one, every pause is a task on the virtual clock, and the bus's faults act on each command sent.
 */
import type { RunCommandInput } from '../../shared/engine/run/commands.ts';
import type { Reply } from '../../shared/engine/run/decision.ts';
import type { Mailbox } from '../../shared/ports/mailbox.ts';
import { type Faults, isInjectedFault } from './faults.ts';
import type { Rng, Scheduler } from './scheduler.ts';

export type BatchHandler = (runId: string, commands: readonly RunCommandInput[]) => Promise<Reply[]>;

export interface SimMailboxOptions {
  readonly sched: Scheduler;
  readonly faults: Faults;
  readonly rng: Rng;
  /** The shells (warm Lambdas) a batch may be handed to. */
  readonly handlers: readonly BatchHandler[];
  /** A failure that was not injected (a decider or shell bug); the batch is still retried a few times. */
  readonly onError: (error: unknown, runId: string, commands: readonly RunCommandInput[]) => void;
  /** A batch given up on (its senders are told): a dead letter. */
  readonly onDeadLetter: (runId: string, commands: readonly RunCommandInput[], error: unknown) => void;
  readonly batchSize?: number;
  /** Tries of a batch failing by injected faults, and by anything else. */
  readonly tries?: number;
  readonly bugTries?: number;
}

interface Letter {
  readonly command: RunCommandInput;
  readonly answer?: (reply: Reply) => void;
  readonly fail?: (error: unknown) => void;
}

interface Queue {
  readonly letters: Letter[];
  draining: boolean;
}

export class SimMailbox implements Mailbox {
  private readonly queues = new Map<string, Queue>();
  private readonly batchSize: number;
  private readonly tries: number;
  private readonly bugTries: number;

  constructor(private readonly options: SimMailboxOptions) {
    this.batchSize = options.batchSize ?? 10;
    this.tries = options.tries ?? 40;
    this.bugTries = options.bugTries ?? 3;
  }

  async send(runId: string, command: RunCommandInput): Promise<void> {
    this.post(runId, { command });
    await this.options.sched.sleep(this.options.rng.int(1, 5));
  }

  ask(runId: string, command: RunCommandInput): Promise<Reply> {
    return new Promise((answer, fail) => this.post(runId, { command, answer, fail }));
  }

  /** The simulated senders always wait for their answer: none is looked up later. */
  async answer(_id: string): Promise<Reply | undefined> {
    return undefined;
  }

  /** Commands waiting or being handled, over all runs. */
  pending(): number {
    let n = 0;
    for (const queue of this.queues.values()) n += queue.letters.length + (queue.draining ? 1 : 0);
    return n;
  }

  /** Hands a letter to the bus: on time, twice, late, or lost and sent again. */
  private post(runId: string, letter: Letter): void {
    const { sched, rng } = this.options;
    const fault = this.options.faults.draw('bus.deliver');
    const onTime = rng.int(1, 5);
    switch (fault?.fault) {
      case 'duplicate':
        sched.after(onTime, () => this.enqueue(runId, letter));
        // The copy answers nobody: its sender heard from the first.
        sched.after(onTime + fault.rng.int(0, fault.durationMs || 200), () =>
          this.enqueue(runId, { command: letter.command }),
        );
        return;
      case 'delay':
        sched.after(fault.rng.int(0, fault.durationMs), () => this.enqueue(runId, letter));
        return;
      case 'drop-once':
        sched.after(fault.durationMs, () => this.enqueue(runId, letter));
        return;
      default:
        sched.after(onTime, () => this.enqueue(runId, letter));
    }
  }

  private enqueue(runId: string, letter: Letter): void {
    let queue = this.queues.get(runId);
    if (queue === undefined) {
      queue = { letters: [], draining: false };
      this.queues.set(runId, queue);
    }
    queue.letters.push(letter);
    if (!queue.draining) {
      queue.draining = true;
      const taken = queue;
      this.options.sched.after(this.options.rng.int(1, 10), () => void this.drain(runId, taken));
    }
  }

  private async drain(runId: string, queue: Queue): Promise<void> {
    const { sched, rng } = this.options;
    while (queue.letters.length > 0) {
      const batch = queue.letters.splice(0, this.batchSize);
      await this.handle(runId, batch);
      // The next receive of this run's group: other runs' batches get their turn meanwhile.
      await sched.sleep(rng.int(1, 10));
    }
    queue.draining = false;
    if (queue.letters.length === 0) this.queues.delete(runId);
  }

  /**
   * One receive of a batch by a shell. Under `lambda.invoke:timeout` the shell outlives the queue's visibility
   * timeout: the batch is received again by the other shell while the first still handles it, both decide it on
   * their own copies (one commit finds its version taken), and the sender hears the first answer that comes; the
   * group stays blocked until both are done. As in an SQS FIFO queue, only the newest receipt deletes the message:
   * when the second receive fails, the batch comes again (`again`), whatever the first answered.
   */
  private async deliver(
    runId: string,
    commands: readonly RunCommandInput[],
  ): Promise<{ readonly replies: Reply[]; readonly again?: unknown }> {
    const { sched, rng, handlers } = this.options;
    const index = rng.int(0, handlers.length - 1);
    const first = handlers[index] as BatchHandler;
    const fault = handlers.length > 1 ? this.options.faults.draw('lambda.invoke', ['timeout']) : undefined;
    if (fault === undefined) return { replies: await first(runId, commands) };
    const second = handlers[(index + 1) % handlers.length] as BatchHandler;
    const answers: Reply[][] = [];
    const failures: unknown[] = [];
    let newestFailed: { error: unknown } | undefined;
    const receive = (handler: BatchHandler, newest: boolean) =>
      handler(runId, commands).then(
        (replies) => void answers.push(replies),
        (error: unknown) => {
          failures.push(error);
          if (newest) newestFailed = { error };
        },
      );
    await Promise.all([receive(first, false), sched.sleep(fault.rng.int(0, 30)).then(() => receive(second, true))]);
    for (const error of failures)
      if (!isInjectedFault(error) && answers.length > 0) this.options.onError(error, runId, commands);
    const answered = answers[0];
    if (answered === undefined) throw failures[0];
    return newestFailed === undefined ? { replies: answered } : { replies: answered, again: newestFailed.error };
  }

  private async handle(runId: string, batch: readonly Letter[]): Promise<void> {
    const { sched, rng } = this.options;
    const commands = batch.map((letter) => letter.command);
    let bugs = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        const { replies, again } = await this.deliver(runId, commands);
        // A sender hears the first answer; a later one (the batch taken again) changes nothing it was told.
        for (const [i, letter] of batch.entries()) letter.answer?.(replies[i] ?? { ok: true });
        if (again === undefined) return;
        throw again;
      } catch (error) {
        if (!isInjectedFault(error)) {
          bugs++;
          this.options.onError(error, runId, commands);
        }
        if (attempt >= this.tries || bugs >= this.bugTries) {
          this.options.onDeadLetter(runId, commands, error);
          for (const letter of batch) letter.fail?.(error);
          return;
        }
        // The visibility timeout: a few hundred virtual milliseconds, doubling, at most half a minute.
        await sched.sleep(Math.min(30_000, 200 * 2 ** Math.min(attempt - 1, 8)) + rng.int(0, 100));
      }
    }
  }
}
