/**
 * The decider Lambda's handling of an SQS FIFO batch (the event source mapping reports batch item failures): each
 * run's letters go to the shell in order, as one batch; a run whose batch fails is reported back whole, and nothing
 * of another run; a body that is not a letter fails alone; the answers a sender waits for are written under the
 * letter's id.
 */
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../../functions/decider.ts';
import type { MailboxLetter } from '../../../shared/adapters/aws/sqs-mailbox.ts';
import type { Reply } from '../../../shared/engine/run/decision.ts';

const record = (messageId: string, body: unknown) => ({
  messageId,
  body: typeof body === 'string' ? body : JSON.stringify(body),
  attributes: { MessageGroupId: (body as Partial<MailboxLetter>).runId ?? 'unknown' },
});
const letter = (runId: string, id: string, reply = false): MailboxLetter => ({
  runId,
  id,
  command: { kind: 'Cancel', reason: id } as unknown as MailboxLetter['command'],
  ...(reply ? { reply: true } : {}),
});

function harness(failing: ReadonlySet<string> = new Set()) {
  const batches: { runId: string; ids: string[] }[] = [];
  const replies = new Map<string, Reply>();
  const handler = createHandler({
    shell: {
      handle: async (runId, commands) => {
        batches.push({ runId, ids: commands.map((c) => String((c as { reason?: unknown }).reason)) });
        if (failing.has(runId)) throw new Error(`run ${runId} failed`);
        return commands.map((): Reply => ({ ok: true, value: { runId } }));
      },
    },
    replies: {
      get: async (id) => replies.get(id),
      put: async (id, reply) => {
        replies.set(id, reply);
      },
    },
  });
  return { handler, batches, replies };
}

describe('decider handler', () => {
  it('hands each run its letters in order as one batch, and writes the answers senders wait for', async () => {
    const { handler, batches, replies } = harness();
    const answer = await handler({
      Records: [
        record('m1', letter('r1', 'a', true)),
        record('m2', letter('r2', 'b')),
        record('m3', letter('r1', 'c')),
      ],
    });
    expect(answer).toEqual({ batchItemFailures: [] });
    expect(batches).toEqual([
      { runId: 'r1', ids: ['a', 'c'] },
      { runId: 'r2', ids: ['b'] },
    ]);
    expect([...replies.keys()]).toEqual(['a']);
  });

  it('reports every letter of a run whose batch failed, and none of the other runs', async () => {
    const { handler } = harness(new Set(['r1']));
    const answer = await handler({
      Records: [record('m1', letter('r1', 'a')), record('m2', letter('r2', 'b')), record('m3', letter('r1', 'c'))],
    });
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }, { itemIdentifier: 'm3' }] });
  });

  it('fails a body that is not a letter, even not JSON, alone: the other runs are decided', async () => {
    const { handler, batches } = harness();
    const answer = await handler({
      Records: [record('m1', '{not json'), record('m2', { runId: 'r2' }), record('m3', letter('r3', 'c'))],
    });
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }, { itemIdentifier: 'm2' }] });
    expect(batches).toEqual([{ runId: 'r3', ids: ['c'] }]);
  });
});
