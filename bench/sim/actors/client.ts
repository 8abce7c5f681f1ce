/**
 * The run's outside callers. The client and the invalidator: at seeded virtual times the client cancels the run
 * (with or without compensation), invalidates steps by request (sometimes sending the same request again, under the
 * same key, as a client that lost the answer does), reports a change of a resource that steps watch (the invalidator
 * then asks every run watching it), and invalidates a run once it has finished. Every answer is recorded for the
 * checks. A person raises the budget of a run paused for it, now and then, sometimes too little (refused, 422). The
 * replanner, as far as the decider takes it today (revisions are not decided yet): told that a final
 * failure waits for its answer, it declines it after a while, or says nothing and lets the failure's watch (a timer)
 * decline it.
 */
import { DEFAULT_TENANT } from '../../../shared/config/defaults.ts';
import { effectiveBudget } from '../../../shared/engine/budget.ts';
import type { CommittedBatch } from '../../../shared/ports/run-log.ts';
import type { SimRun } from '../recorder.ts';
import { type ActorContext, ask, streamOf } from './platform.ts';

/** Schedules what the client does to `run` while it runs. */
export function scheduleClient(ctx: ActorContext, run: SimRun): void {
  const { runId } = run;
  for (const [i, action] of run.sim.actions.entries()) {
    const rng = streamOf(ctx, `client:${runId}:${i}`);
    switch (action.kind) {
      case 'cancel':
        ctx.sched.at(run.createdAt + action.atMs, () => {
          void ask(ctx, runId, { kind: 'CancelRun', compensate: action.compensate, by: 'client' });
        });
        break;
      case 'invalidate': {
        const command = {
          kind: 'Invalidate' as const,
          roots: action.roots,
          reason: 'the client asked',
          key: `${runId}:inv${i}`,
          by: 'client',
        };
        ctx.sched.at(run.createdAt + action.atMs, () => void ask(ctx, runId, command));
        if (action.repeat)
          ctx.sched.at(run.createdAt + action.atMs + rng.int(1_000, 30_000), () => void ask(ctx, runId, command));
        break;
      }
      case 'resource':
        ctx.sched.at(run.createdAt + action.atMs, () => {
          void resourceChanged(ctx, action.resourceKey, ctx.sched.now - rng.int(0, 5_000));
        });
        break;
      case 'invalidate-after-finish':
        break;
    }
  }
}

/** The invalidator: every run step watching the resource, per run, invalidated if it ran before the change. */
async function resourceChanged(ctx: ActorContext, resourceKey: string, changedAtMs: number): Promise<void> {
  const changedAt = new Date(changedAtMs).toISOString();
  const byRun = new Map<string, string[]>();
  for (const { runId, stepId } of await ctx.store.listWatchers(DEFAULT_TENANT, resourceKey))
    byRun.set(runId, [...(byRun.get(runId) ?? []), stepId]);
  await Promise.all(
    [...byRun].map(([runId, roots]) =>
      ask(ctx, runId, {
        kind: 'Invalidate',
        roots,
        reason: `${resourceKey} changed`,
        key: `${resourceKey}@${changedAt}`,
        resourceChange: { changedAt },
        by: 'invalidator',
      }),
    ),
  );
}

/** The client invalidates a run once it has finished (complete or failed), when its plan says it will. */
export function afterFinish(ctx: ActorContext): (run: SimRun, batch: CommittedBatch) => void {
  const done = new Set<string>();
  return (run, batch) => {
    const action = run.sim.actions.find((a) => a.kind === 'invalidate-after-finish');
    if (action?.kind !== 'invalidate-after-finish' || done.has(run.runId)) return;
    const finished = batch.events.some(
      (e) => e.type === 'RunFinished' && (e.terminal.state === 'complete' || e.terminal.state === 'failed'),
    );
    if (!finished) return;
    done.add(run.runId);
    const rng = streamOf(ctx, `after-finish:${run.runId}`);
    ctx.sched.after(rng.int(1_000, 60_000), () => {
      void ask(ctx, run.runId, {
        kind: 'Invalidate',
        roots: action.roots,
        reason: 'the client asked after the run finished',
        key: `${run.runId}:after-finish`,
        by: 'client',
      });
    });
  };
}

/**
 * A person who gives a run paused `budget_exhausted` more tokens, a while after it paused (and not always): what was
 * spent and then some, or now and then less than enough (the decider refuses it, 422, and the run stays paused).
 */
export function budgetRaiser(ctx: ActorContext): (run: SimRun, batch: CommittedBatch) => void {
  return (run, batch) => {
    const paused = batch.events.some(
      (e) => e.type === 'RunFinished' && e.terminal.state === 'paused' && e.terminal.reason === 'budget_exhausted',
    );
    if (!paused) return;
    const rng = streamOf(ctx, `raise:${run.runId}:${batch.version}`);
    if (!rng.chance(0.6)) return;
    const short = rng.chance(0.15);
    ctx.sched.after(rng.int(1_000, 120_000), () => {
      const state = run.replica;
      const limit = effectiveBudget(state.plan?.plan.budget, state.run.raisedBudget)?.maxTokens;
      if (limit === undefined) return;
      const spent = state.run.usageTokens ?? 0;
      const maxTokens = short ? limit + 1 : Math.max(limit, spent) + rng.int(100, 3000);
      void ask(ctx, run.runId, { kind: 'RaiseBudget', limits: { maxTokens }, by: 'person' });
    });
  };
}

export function replanner(ctx: ActorContext): (run: SimRun, batch: CommittedBatch) => void {
  return (run, batch) => {
    for (const event of batch.events) {
      if (event.type !== 'ReplanAsked') continue;
      const rng = streamOf(ctx, `replan:${run.runId}:${event.failure}`);
      if (!rng.chance(0.5)) continue;
      ctx.sched.after(rng.int(5_000, 300_000), () => {
        void ctx.mailbox.send(run.runId, {
          kind: 'DeclineReplan',
          failure: event.failure,
          code: 'E_NO_REVISION',
          message: 'the replanner found no better plan',
        });
      });
    }
  };
}
