/**
 * A run's mailbox: the one way in to its decider. Commands of a run are taken one batch at a time, in the order they
 * came (on AWS, an SQS FIFO queue with the run id as message group; embedded, an in-process queue per run), so no two
 * decisions of a run ever race; commands of different runs are taken in parallel.
 */
import type { RunCommandInput } from '../engine/run/commands.ts';
import type { Reply } from '../engine/run/decision.ts';
import { CairnError } from '../errors.ts';

/** Answers kept for senders that wait on a mailbox whose decider runs elsewhere (deployed: the decider Lambda). */
export interface Replies {
  get(id: string): Promise<Reply | undefined>;
  put(id: string, reply: Reply): Promise<void>;
}

/** Who takes a run's batches out of its mailbox: the run's decider, behind its shell. */
export interface BatchHandler {
  /** Decides a batch of one run's commands, in order; the answer to each. */
  handle(runId: string, commands: readonly RunCommandInput[]): Promise<Reply[]>;
}

export interface AskOptions {
  /**
   * The command's id, the letter's: every try of one ask with the same id is one command (not posted again while
   * it waits, or answered from its decision once made), and `answer` finds its decision by it. Absent: a new one.
   */
  readonly id?: string;
  /** How long to wait for the decision before DecisionPendingError (the decision still comes); absent: the place's. */
  readonly waitMs?: number;
}

export interface Mailbox {
  /** Hands a command to the run's decider; resolves once it is accepted for delivery (not decided). */
  send(runId: string, command: RunCommandInput): Promise<void>;
  /**
   * Hands a command over and waits for the decider's answer (what will happen, told truthfully); past the wait,
   * DecisionPendingError (retryable) names the command's id.
   */
  ask(runId: string, command: RunCommandInput, options?: AskOptions): Promise<Reply>;
  /** The decider's answer to an asked command, by its id; undefined while it is still to come (or never asked). */
  answer(id: string): Promise<Reply | undefined>;
}

/** The decision is taken in order after the run's earlier commands: past the sender's wait it is still to come. */
export class DecisionPendingError extends CairnError {
  static readonly code = 'E_DECISION_PENDING';
  readonly commandId: string;
  constructor(runId: string, id: string) {
    super('DecisionPendingError', `the run's decider has not answered command ${id} yet: ask again`, {
      retryable: true,
      context: { code: DecisionPendingError.code, runId, commandId: id },
    });
    this.commandId = id;
  }
}

export const isDecisionPendingError = (error: unknown): error is DecisionPendingError =>
  typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'DecisionPendingError';
