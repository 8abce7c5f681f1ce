/**
 * The people in the loop. Told that a step waits for a decision, a person looks at the step's approvals a little
 * later and, for each pending one, decides in time, decides late (after the wait may have timed out), or never
 * does; now and then they send the same decision again (their first answer was lost) or a second person decides
 * otherwise. A run held because a compensation failed for good is retried or resolved by hand by someone. Every
 * answer they get is recorded: the checks hold the decider to it.
 */
import type { CommittedBatch } from '../../../shared/ports/run-log.ts';
import type { SimRun } from '../recorder.ts';
import { type ActorContext, ask, streamOf } from './platform.ts';

const OTHER: Readonly<Record<'approve' | 'reject' | 'edit', 'approve' | 'reject' | 'edit'>> = {
  approve: 'reject',
  reject: 'approve',
  edit: 'reject',
};

export class People {
  /** Approvals someone has taken up. */
  private readonly seen = new Set<string>();

  constructor(private readonly ctx: ActorContext) {}

  notice(runId: string, stepId: string, generation: number, seconds: number): void {
    const rng = streamOf(this.ctx, `notice:${runId}:${stepId}:${generation}`);
    this.ctx.sched.after(rng.int(500, 5_000), () => void this.look(runId, stepId, generation, seconds, 3));
  }

  /** A person reacts to a run held for a failed compensation. */
  readonly onCommit = (run: SimRun, batch: CommittedBatch): void => {
    for (const event of batch.events) {
      if (event.type !== 'RunFinished' || event.terminal.reason !== 'compensation_failed') continue;
      const stepId = event.terminal.evidence.stepId;
      if (typeof stepId !== 'string') continue;
      const rng = streamOf(this.ctx, `compensation:${run.runId}:${batch.version}`);
      if (!rng.chance(0.8)) continue;
      const action = rng.chance(0.5)
        ? { kind: 'retry' as const }
        : { kind: 'resolve' as const, note: 'undone by hand' };
      this.ctx.sched.after(rng.int(10_000, 300_000), () => {
        void ask(this.ctx, run.runId, { kind: 'ActOnCompensation', stepId, action, by: 'ops' });
      });
    }
  };

  private async look(runId: string, stepId: string, generation: number, seconds: number, tries: number) {
    const approvals = await this.ctx.store.listRunApprovals(runId, { stepId });
    const pending = approvals.filter(
      (a) => a.generation === generation && a.status === 'pending' && !this.seen.has(a.approvalId),
    );
    if (pending.length === 0 && tries > 0) {
      this.ctx.sched.after(2_000, () => void this.look(runId, stepId, generation, seconds, tries - 1));
      return;
    }
    for (const approval of pending) {
      this.seen.add(approval.approvalId);
      this.plan(runId, approval.approvalId, seconds, Date.parse(approval.deadline));
    }
  }

  private plan(runId: string, approvalId: string, seconds: number, deadline: number): void {
    const rng = streamOf(this.ctx, `person:${approvalId}`);
    const when = rng.weighted([
      ['in time', 60],
      ['late', 15],
      ['never', 25],
    ] as const);
    if (when === 'never') return;
    const window = seconds * 1000;
    // Late: often in the last seconds before the deadline it is shown, which the wait's own timeout may have passed
    // already (the decision then races the timeout's report); else well past it.
    const late = rng.chance(0.6)
      ? Math.max(0, deadline - this.ctx.sched.now - rng.int(0, 3_000))
      : rng.int(0.8 * window, 1.4 * window);
    const delay = when === 'in time' ? rng.int(1_000, 0.8 * window) : late;
    const decision = rng.weighted([
      ['approve', 65],
      ['reject', 20],
      ['edit', 15],
    ] as const);
    this.ctx.sched.after(delay, () => void this.decide(runId, approvalId, decision, 'ana', true));
  }

  private async decide(
    runId: string,
    approvalId: string,
    decision: 'approve' | 'reject' | 'edit',
    by: string,
    first: boolean,
  ): Promise<void> {
    await ask(this.ctx, runId, {
      kind: 'DecideApproval',
      approvalId,
      decision,
      by,
      ...(decision === 'edit' ? { output: { edited: true } } : {}),
    });
    if (!first) return;
    const rng = streamOf(this.ctx, `again:${approvalId}`);
    if (rng.chance(0.15))
      this.ctx.sched.after(rng.int(1_000, 20_000), () => void this.decide(runId, approvalId, decision, by, false));
    if (rng.chance(0.1))
      this.ctx.sched.after(rng.int(0, 10_000), () => void this.decide(runId, approvalId, OTHER[decision], 'bo', false));
  }
}
