/**
 * A run's mailbox: the one way in to its decider. Commands of a run are taken one batch at a time, in the order they
 * came (on AWS, an SQS FIFO queue with the run id as message group; embedded, an in-process queue per run), so no two
 * decisions of a run ever race; commands of different runs are taken in parallel.
 */
import type { RunCommandInput } from '../engine/run/commands.ts';
import type { Reply } from '../engine/run/decision.ts';

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

export interface Mailbox {
  /** Hands a command to the run's decider; resolves once it is accepted for delivery (not decided). */
  send(runId: string, command: RunCommandInput): Promise<void>;
  /** Hands a command over and waits for the decider's answer (what will happen, told truthfully). */
  ask(runId: string, command: RunCommandInput): Promise<Reply>;
}
