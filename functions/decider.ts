/**
 * The decider Lambda: reads the runs' mailbox (an SQS FIFO queue, the run id as message group) and hands each run's
 * commands, in order, to the run's decider shell (shared/services/runs/shell.ts). The event source mapping gives it
 * one batch per message group at a time, so a run's commands are never decided by two invocations at once. Answers
 * a sender waits for are written back under the command's id (shared/adapters/aws/sqs-mailbox.ts).
 *
 * A batch of a run that fails is reported back (ReportBatchItemFailures) with every later message of the same group,
 * as FIFO ordering requires: SQS redelivers them, and the shell decides them again (a command decided already is a
 * repeat that decides nothing).
 *
 * Environment (shared/config/settings.ts): CAIRN_TABLE_NAME, CAIRN_RUN_MACHINE_ARN, CAIRN_STEP_MACHINE_ARN,
 * CAIRN_MAILBOX_URL, CAIRN_MAILBOX_ARN, CAIRN_SCHEDULER_ROLE_ARN, CAIRN_SCHEDULE_GROUP (the mailbox and the timers it
 * schedules), the run settings (CAIRN_RUN_DEADLINE_SECONDS, CAIRN_MAX_REPLANS, ...) and
 * CAIRN_MAX_RUNNING_RUNS_PER_TENANT (a run's end frees its tenant's slot and admits the next queued run).
 */
import { z } from 'zod';
import type { MailboxLetter } from '../shared/adapters/aws/sqs-mailbox.ts';
import type { Env } from '../shared/config/settings.ts';
import type { RunCommandInput } from '../shared/engine/run/commands.ts';
import type { Replies } from '../shared/ports/mailbox.ts';
import type { RunShell } from '../shared/services/runs/shell.ts';
import { lambdaRoot, lazyHandler } from './root.ts';

export interface DeciderHandlerDeps {
  readonly shell: Pick<RunShell, 'handle'>;
  readonly replies: Replies;
}

const sqsEvent = z.object({
  Records: z.array(
    z.object({
      messageId: z.string(),
      body: z.string(),
      attributes: z.object({ MessageGroupId: z.string().optional() }).passthrough(),
    }),
  ),
});

const letterSchema = z.object({
  runId: z.string().min(1),
  id: z.string().min(1),
  command: z.object({ kind: z.string() }).passthrough(),
  reply: z.boolean().optional(),
});

export interface BatchResponse {
  readonly batchItemFailures: { readonly itemIdentifier: string }[];
}

export function createHandler(deps: DeciderHandlerDeps) {
  return async (event: unknown): Promise<BatchResponse> => {
    const { Records } = sqsEvent.parse(event);
    const groups = new Map<string, { messageId: string; letter: MailboxLetter }[]>();
    const failures: string[] = [];
    for (const record of Records) {
      const parsed = letterSchema.safeParse(jsonOrUndefined(record.body));
      // A letter that is not one (not even JSON) fails alone, and goes to the queue's DLQ after its receives: it can
      // never be decided. Thrown, it would fail the whole batch, and every other run's letters in it with it.
      if (!parsed.success) {
        failures.push(record.messageId);
        continue;
      }
      const letter = parsed.data as unknown as MailboxLetter;
      const group = groups.get(letter.runId) ?? [];
      group.push({ messageId: record.messageId, letter });
      groups.set(letter.runId, group);
    }
    for (const [runId, letters] of groups) {
      try {
        const replies = await deps.shell.handle(
          runId,
          letters.map((l) => l.letter.command as RunCommandInput),
        );
        await Promise.all(
          letters.map(async ({ letter }, i) => {
            const reply = replies[i];
            if (letter.reply === true && reply !== undefined) await deps.replies.put(letter.id, reply);
          }),
        );
      } catch (error) {
        console.error('cairn decider: a batch failed', { runId, error });
        failures.push(...letters.map((l) => l.messageId));
      }
    }
    return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function defaultDeps(env: Env = process.env): DeciderHandlerDeps {
  const root = lambdaRoot(env);
  return { shell: root.shell, replies: root.replies };
}

export const handler = lazyHandler('decider', () => createHandler(defaultDeps()));
