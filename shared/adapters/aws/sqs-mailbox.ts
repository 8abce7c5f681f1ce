/**
 * The runs' mailboxes deployed (shared/ports/mailbox.ts): one SQS FIFO queue, the run id as message group, so a
 * run's commands reach the decider Lambda in order, one batch of a run at a time, and runs go side by side. A sender
 * that asks waits for the decider's answer, which the decider Lambda writes to the table under the command's id
 * (dynamo-replies.ts); past its wait it is told the decision is still being made (retryable), and a repeat of the
 * same ask (the same command id) finds the answer once it is there.
 */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { RunCommandInput } from '../../engine/run/commands.ts';
import { DecisionPendingError, type Mailbox, type Replies } from '../../ports/mailbox.ts';

/** A command as it travels through the queue: the run, the command, its id, and whether its sender waits. */
export interface MailboxLetter {
  readonly runId: string;
  readonly id: string;
  readonly command: RunCommandInput;
  readonly reply?: boolean;
}

export interface SqsMailboxOptions {
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly replies: Replies;
  readonly newId: () => string;
  /** How long an asking sender waits for the answer (API Gateway gives a request 29 s). */
  readonly waitMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

export { DecisionPendingError };

export function createSqsMailbox(options: SqsMailboxOptions): Mailbox {
  const waitMs = options.waitMs ?? 20_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)));
  const post = async (letter: MailboxLetter): Promise<void> => {
    await options.client.send(
      new SendMessageCommand({
        QueueUrl: options.queueUrl,
        MessageGroupId: letter.runId,
        // A resend of the same letter within SQS's five minutes is dropped by the queue itself.
        MessageDeduplicationId: letter.id,
        MessageBody: JSON.stringify(letter),
      }),
    );
  };
  return {
    async send(runId, command) {
      await post({ runId, id: options.newId(), command });
    },
    async ask(runId, command, given = {}) {
      const id = given.id ?? options.newId();
      const wait = given.waitMs ?? waitMs;
      // A retry of an ask its decision already answered gets that answer; one still waiting posts the same letter,
      // which the queue drops within its five minutes (after them the decider's repeat of it decides nothing new).
      if (given.id !== undefined) {
        const decided = await options.replies.get(id);
        if (decided !== undefined) return decided;
      }
      await post({ runId, id, command, reply: true });
      for (let waited = 0, pause = 50; waited < wait; waited += pause, pause = Math.min(pause * 2, 1000)) {
        await sleep(Math.min(pause, wait - waited));
        const reply = await options.replies.get(id);
        if (reply !== undefined) return reply;
      }
      throw new DecisionPendingError(runId, id);
    },
    answer: (id) => options.replies.get(id),
  };
}
