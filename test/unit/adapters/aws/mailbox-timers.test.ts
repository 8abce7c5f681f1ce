import { ConflictException, CreateScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { createSchedulerTimers } from '../../../../shared/adapters/aws/scheduler-timers.ts';
import { createSqsMailbox, DecisionPendingError } from '../../../../shared/adapters/aws/sqs-mailbox.ts';
import type { RunCommandInput } from '../../../../shared/engine/run/commands.ts';
import type { Reply } from '../../../../shared/engine/run/decision.ts';
import type { Mailbox, Replies } from '../../../../shared/ports/mailbox.ts';

const CANCEL: RunCommandInput = { kind: 'CancelRun', compensate: false, by: null };

/** A client that keeps what it was sent and answers with `answer` (a throw when it is an Error). */
function recordingClient<C>(answer: () => unknown = () => ({})) {
  const sent: unknown[] = [];
  const client = {
    send: async (command: unknown) => {
      sent.push(command);
      const result = answer();
      if (result instanceof Error) throw result;
      return result;
    },
  } as unknown as C;
  return { client, sent };
}

function memoryReplies(): Replies & { readonly kept: Map<string, Reply> } {
  const kept = new Map<string, Reply>();
  return { kept, get: async (id) => kept.get(id), put: async (id, reply) => void kept.set(id, reply) };
}

describe('createSqsMailbox', () => {
  it('sends a run’s command in the run’s message group, deduplicated by the letter’s id', async () => {
    const { client, sent } = recordingClient<SQSClient>();
    const mailbox = createSqsMailbox({ client, queueUrl: 'q', replies: memoryReplies(), newId: () => 'c-1' });
    await mailbox.send('run-1', CANCEL);
    expect(sent).toHaveLength(1);
    const message = (sent[0] as SendMessageCommand).input;
    expect(sent[0]).toBeInstanceOf(SendMessageCommand);
    expect(message).toMatchObject({ QueueUrl: 'q', MessageGroupId: 'run-1', MessageDeduplicationId: 'c-1' });
    expect(JSON.parse(message.MessageBody ?? '')).toEqual({ runId: 'run-1', id: 'c-1', command: CANCEL });
  });

  it('answers an ask with the reply the decider wrote under the command’s id', async () => {
    const replies = memoryReplies();
    const reply = { kind: 'accepted' } as unknown as Reply;
    const { client, sent } = recordingClient<SQSClient>(() => {
      replies.kept.set('c-2', reply);
      return {};
    });
    const mailbox = createSqsMailbox({ client, queueUrl: 'q', replies, newId: () => 'c-2', sleep: async () => {} });
    await expect(mailbox.ask('run-1', CANCEL)).resolves.toBe(reply);
    expect(JSON.parse((sent[0] as SendMessageCommand).input.MessageBody ?? '')).toMatchObject({ reply: true });
  });

  it('tells the sender to ask again, retryably, when no answer comes within its wait', async () => {
    const { client } = recordingClient<SQSClient>();
    let slept = 0;
    const mailbox = createSqsMailbox({
      client,
      queueUrl: 'q',
      replies: memoryReplies(),
      newId: () => 'c-3',
      waitMs: 1_000,
      sleep: async (ms) => {
        slept += ms;
      },
    });
    const error = await mailbox.ask('run-1', CANCEL).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DecisionPendingError);
    expect(error).toMatchObject({ retryable: true, context: { runId: 'run-1', commandId: 'c-3' } });
    expect(slept).toBeGreaterThanOrEqual(1_000);
  });

  it('keeps one letter id across the retries of one ask, and answers a retry from the decision once it is made', async () => {
    const replies = memoryReplies();
    const { client, sent } = recordingClient<SQSClient>();
    let ids = 0;
    const mailbox = createSqsMailbox({
      client,
      queueUrl: 'q',
      replies,
      newId: () => `fresh-${++ids}`,
      waitMs: 100,
      sleep: async () => {},
    });

    const first = await mailbox.ask('run-1', CANCEL, { id: 'cmd-1' }).catch((e: unknown) => e);
    const second = await mailbox.ask('run-1', CANCEL, { id: 'cmd-1' }).catch((e: unknown) => e);
    replies.kept.set('cmd-1', { ok: true });
    const third = await mailbox.ask('run-1', CANCEL, { id: 'cmd-1' });

    expect(first).toBeInstanceOf(DecisionPendingError);
    expect(second).toMatchObject({ context: { commandId: 'cmd-1' } });
    expect(third).toEqual({ ok: true });
    expect(await mailbox.answer('cmd-1')).toEqual({ ok: true });
    // Two posts of the same letter (SQS drops the second within its five minutes), none after the decision.
    expect(sent.map((s) => (s as SendMessageCommand).input.MessageDeduplicationId)).toEqual(['cmd-1', 'cmd-1']);
    expect(ids).toBe(0);
  });
});

describe('createSchedulerTimers', () => {
  const NOW = new Date('2026-01-01T00:00:00.000Z');
  const later = '2026-01-01T01:00:00.250Z';
  const timeout = { kind: 'DecisionTimedOut', stepId: 's', generation: 1, at: later } as unknown as RunCommandInput & {
    at: string;
  };
  const unusedMailbox: Mailbox = {
    send: async () => expect.fail('a timer not yet due goes to the scheduler'),
    ask: async () => expect.fail('timers never ask'),
    answer: async () => expect.fail('timers never ask'),
  };

  it('makes a one-time schedule in its group that sends the command to the run’s message group', async () => {
    const { client, sent } = recordingClient<SchedulerClient>();
    const timers = createSchedulerTimers({
      client,
      queueArn: 'arn:queue',
      roleArn: 'arn:role',
      groupName: 'cairn-test',
      mailbox: unusedMailbox,
      clock: () => NOW,
    });
    await timers.schedule('run-1', 'deadline', later, timeout);
    const input = (sent[0] as CreateScheduleCommand).input;
    expect(sent[0]).toBeInstanceOf(CreateScheduleCommand);
    expect(input).toMatchObject({
      GroupName: 'cairn-test',
      ScheduleExpression: 'at(2026-01-01T01:00:01)',
      ScheduleExpressionTimezone: 'UTC',
      ActionAfterCompletion: 'DELETE',
      Target: { Arn: 'arn:queue', RoleArn: 'arn:role', SqsParameters: { MessageGroupId: 'run-1' } },
    });
    const letter = JSON.parse(input.Target?.Input ?? '');
    expect(letter).toMatchObject({ runId: 'run-1', command: { kind: 'DecisionTimedOut', stepId: 's' } });
    expect(letter.command).not.toHaveProperty('at');
  });

  it('names a timer’s schedule by the run and the timer, so scheduling it twice is one schedule', async () => {
    let made = 0;
    const { client, sent } = recordingClient<SchedulerClient>(() =>
      made++ === 0 ? {} : new ConflictException({ message: 'exists', Message: 'exists', $metadata: {} }),
    );
    const timers = createSchedulerTimers({
      client,
      queueArn: 'q',
      roleArn: 'r',
      groupName: 'g',
      mailbox: unusedMailbox,
      clock: () => NOW,
    });
    await timers.schedule('run-1', 'deadline', later, timeout);
    await expect(timers.schedule('run-1', 'deadline', later, timeout)).resolves.toBeUndefined();
    await timers.schedule('run-2', 'deadline', later, timeout);
    const names = sent.map((c) => (c as CreateScheduleCommand).input.Name);
    expect(names[0]).toBe(names[1]);
    expect(names[2]).not.toBe(names[0]);
    expect(names.every((n) => (n ?? '').length <= 64)).toBe(true);
  });

  it('sends a timer already due straight to the mailbox', async () => {
    const { client, sent } = recordingClient<SchedulerClient>();
    const mailed: RunCommandInput[] = [];
    const timers = createSchedulerTimers({
      client,
      queueArn: 'q',
      roleArn: 'r',
      groupName: 'g',
      mailbox: {
        send: async (_run, command) => void mailed.push(command),
        ask: async () => expect.fail('no ask'),
        answer: async () => expect.fail('no ask'),
      },
      clock: () => NOW,
    });
    await timers.schedule('run-1', 'deadline', NOW.toISOString(), { ...timeout, at: NOW.toISOString() });
    expect(sent).toEqual([]);
    expect(mailed).toEqual([expect.objectContaining({ kind: 'DecisionTimedOut' })]);
  });
});
