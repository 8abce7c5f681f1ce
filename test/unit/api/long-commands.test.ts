/**
 * Cancels and invalidations whose decision outlasts the API's wait: answered 202 with the command's status URL, whose
 * GET answers 202 pending, then what the request would have answered. The runs' deciders sit behind a mailbox made
 * slow (its decisions held until the test lets them go), as a large run's would be.
 */
import { describe, expect, it } from 'vitest';
import { DecisionPendingError, type Mailbox } from '../../../shared/ports/mailbox.ts';
import { harness, runRecord } from './harness.ts';

/** The API's wait in these tests: short, the held decisions outlast it. */
const WAIT_MS = 20;

/** `inner`'s decisions held until `release`; an ask past its wait is told the decision is pending, as the adapters do. */
function slowMailbox() {
  let inner: Mailbox | undefined;
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const ids: string[] = [];
  const decisions: Promise<unknown>[] = [];
  const mailbox: Mailbox = {
    send: (runId, command) => (inner as Mailbox).send(runId, command),
    async ask(runId, command, options = {}) {
      if (options.id !== undefined) ids.push(options.id);
      const decision = held.then(() =>
        (inner as Mailbox).ask(runId, command, options.id === undefined ? {} : { id: options.id }),
      );
      decisions.push(decision.catch(() => undefined));
      if (options.waitMs === undefined) return decision;
      const waited = new Promise<never>((_, fail) =>
        setTimeout(() => fail(new DecisionPendingError(runId, options.id ?? 'unnamed')), options.waitMs),
      );
      return Promise.race([decision, waited]);
    },
    answer: (id) => (inner as Mailbox).answer(id),
  };
  const wrap = (given: Mailbox): Mailbox => {
    inner = given;
    return mailbox;
  };
  /** Lets the held decisions go and resolves once each is made. */
  const decide = async (): Promise<void> => {
    release();
    await Promise.all(decisions);
  };
  return { wrap, decide, ids };
}

async function slowHarness() {
  const slow = slowMailbox();
  const h = await harness({ wrapMailbox: slow.wrap, decisionWaitMs: WAIT_MS });
  return { h, slow };
}

type Pending = { runId: string; commandId: string; decision: string; location: string };

describe('a cancel that outlasts the wait', () => {
  it('answers 202 with its status URL, pending until decided, then the answer the request would have had', async () => {
    const { h, slow } = await slowHarness();
    await h.store.createRun(runRecord('r'));

    const response = await h.request('POST', '/runs/r/cancel');

    expect(response.status).toBe(202);
    const pending = (await response.json()) as Pending;
    expect(pending).toMatchObject({ runId: 'r', decision: 'pending' });
    expect(response.headers.get('location')).toBe(pending.location);
    expect(pending.location).toBe(`/runs/r/commands/${pending.commandId}`);
    const early = await h.request('GET', pending.location);
    expect(early.status).toBe(202);
    expect(await early.json()).toEqual(pending);

    await slow.decide();
    const decided = await h.request('GET', pending.location);

    expect(decided.status).toBe(200);
    expect(await decided.json()).toEqual({ runId: 'r', status: 'cancelled' });
    expect(await h.store.getRun('r')).toMatchObject({ status: 'cancelled' });
    expect(slow.ids).toEqual([pending.commandId]);
  });

  it('answers at once, as before, when the decision comes within the wait', async () => {
    const h = await harness({ decisionWaitMs: 5_000 });
    await h.store.createRun(runRecord('r'));
    const response = await h.request('POST', '/runs/r/cancel');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ runId: 'r', status: 'cancelled' });
  });
});

describe('an invalidation that outlasts the wait', () => {
  it("gives a decided refusal at its status URL as the request's own answer", async () => {
    const fast = await harness({ decisionWaitMs: 5_000 });
    await fast.store.createRun(runRecord('run-1', { status: 'cancelled' }));
    const direct = await fast.request('POST', '/runs/run-1/steps/w/invalidate');

    const { h, slow } = await slowHarness();
    await h.store.createRun(runRecord('run-1', { status: 'cancelled' }));
    const response = await h.request('POST', '/runs/run-1/steps/w/invalidate');
    expect(response.status).toBe(202);
    const { location } = (await response.json()) as Pending;
    await slow.decide();
    const decided = await h.request('GET', location);

    expect(direct.status).toBeGreaterThanOrEqual(400);
    expect(decided.status).toBe(direct.status);
    expect(await decided.json()).toEqual(await direct.json());
  });

  it('keeps one command id for every retry of a keyed request', async () => {
    const { h, slow } = await slowHarness();
    await h.store.createRun(runRecord('run-1'));
    const send = () => h.request('POST', '/runs/run-1/steps/w/invalidate', { headers: { 'idempotency-key': 'k-1' } });

    const first = (await (await send()).json()) as Pending;
    const second = (await (await send()).json()) as Pending;

    expect(second.commandId).toBe(first.commandId);
    expect(new Set(slow.ids)).toEqual(new Set([first.commandId]));
    await slow.decide();
  });
});

describe('GET /runs/{runId}/commands/{commandId}', () => {
  it('answers 404 for an id that is not a command of this run', async () => {
    const { h } = await slowHarness();
    await h.store.createRun(runRecord('r'));
    await h.store.createRun(runRecord('other'));
    const response = await h.request('POST', '/runs/other/cancel');
    const { commandId } = (await response.json()) as Pending;

    expect((await h.request('GET', `/runs/r/commands/${commandId}`)).status).toBe(404);
    expect((await h.request('GET', '/runs/r/commands/whatever')).status).toBe(404);
  });
});
