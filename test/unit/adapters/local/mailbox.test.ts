import { describe, expect, it } from 'vitest';
import { createLocalMailbox } from '../../../../shared/adapters/local/mailbox.ts';
import type { RunCommandInput } from '../../../../shared/engine/run/commands.ts';
import type { Reply } from '../../../../shared/engine/run/decision.ts';

const cancel = (by: string): RunCommandInput => ({ kind: 'CancelRun', compensate: false, by });
const OK: Reply = { ok: true };

/** The AWS SDK's throttle, as a platform failure that passes. */
const throttle = (): Error => Object.assign(new Error('throttled'), { name: 'ThrottlingException' });

describe('createLocalMailbox asks by id', () => {
  it('decides one command for every ask of one id, tells a sender past its wait it is pending, and keeps the answer', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const decided: string[] = [];
    const mailbox = createLocalMailbox({
      handle: async (_runId, commands) => {
        await held;
        decided.push(...commands.map((c) => (c as { by: string }).by));
        return commands.map(() => OK);
      },
    });

    const first = await mailbox.ask('r1', cancel('a'), { id: 'cmd-1', waitMs: 5 }).catch((e: unknown) => e);
    const again = mailbox.ask('r1', cancel('a'), { id: 'cmd-1' });
    expect(await mailbox.answer('cmd-1')).toBeUndefined();
    release();

    expect(first).toMatchObject({ name: 'DecisionPendingError', retryable: true, commandId: 'cmd-1' });
    expect(await again).toEqual(OK);
    expect(await mailbox.answer('cmd-1')).toEqual(OK);
    expect(await mailbox.ask('r1', cancel('a'), { id: 'cmd-1' })).toEqual(OK);
    await mailbox.idle();
    expect(decided).toEqual(['a']);
  });
});

describe('createLocalMailbox', () => {
  it("takes a run's commands in order, one batch of a run at a time, runs side by side", async () => {
    const seen: string[] = [];
    let inRun1 = 0;
    let overlapped = false;
    const mailbox = createLocalMailbox({
      handle: async (runId, commands) => {
        if (runId === 'r1' && ++inRun1 > 1) overlapped = true;
        await new Promise((resolve) => setTimeout(resolve, 5));
        seen.push(...commands.map((c) => `${runId}:${(c as { by: string }).by}`));
        if (runId === 'r1') inRun1--;
        return commands.map(() => OK);
      },
      retryMs: 1,
    });
    await Promise.all([
      mailbox.ask('r1', cancel('a')),
      mailbox.ask('r1', cancel('b')),
      mailbox.ask('r2', cancel('x')),
      mailbox.ask('r1', cancel('c')),
    ]);
    await mailbox.idle();
    expect(seen.filter((s) => s.startsWith('r1'))).toEqual(['r1:a', 'r1:b', 'r1:c']);
    expect(seen).toContain('r2:x');
    expect(overlapped).toBe(false);
  });

  it('takes a throttled batch again past its tries until the platform lets it through', async () => {
    let calls = 0;
    const mailbox = createLocalMailbox({
      handle: async (_runId, commands) => {
        calls += 1;
        if (calls <= 5) throw throttle();
        return commands.map(() => OK);
      },
      retryMs: 1,
      maxRetryMs: 2,
      tries: 2,
    });
    await expect(mailbox.ask('r1', cancel('a'))).resolves.toEqual(OK);
    expect(calls).toBe(6);
  });

  it('tells the sender once another failure outlasts its tries, and keeps the letter for the next start', async () => {
    let calls = 0;
    const done: string[] = [];
    const mailbox = createLocalMailbox({
      handle: async () => {
        calls += 1;
        throw new Error('a rule threw');
      },
      retryMs: 1,
      tries: 3,
      onError: () => undefined,
      journal: { posted: () => undefined, done: (ids) => done.push(...ids) },
    });
    await expect(mailbox.ask('r1', cancel('a'))).rejects.toThrow('a rule threw');
    expect(calls).toBe(3);
    expect(done).toEqual([]);
  });

  it('closes once the batch under way has ended, taking no batch after it', async () => {
    let release: () => void = () => undefined;
    const handled: string[] = [];
    const mailbox = createLocalMailbox({
      handle: async (_runId, commands) => {
        handled.push(...commands.map((c) => (c as { by: string }).by));
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return commands.map(() => OK);
      },
      batchSize: 1,
    });
    const first = mailbox.ask('r1', cancel('a'));
    const second = mailbox.ask('r1', cancel('b')).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 5));
    let closed = false;
    const closing = mailbox.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(closed).toBe(false);
    release();
    await closing;
    await expect(first).resolves.toEqual(OK);
    expect(handled).toEqual(['a']);
    void second;
  });
});
