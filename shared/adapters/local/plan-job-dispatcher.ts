/**
 * The planning-job dispatcher embedded (shared/ports/plan-jobs.ts): the job's worker (the same Lambda handler the
 * deployed dispatcher invokes) runs in this process after the request has been answered, as Lambda runs an
 * asynchronous invocation after its 202. `idle()` waits for the jobs under way (tests, a clean stop).
 */
import type { PlanJobDispatcher, PlanJobKind } from '../../ports/plan-jobs.ts';

export interface InProcessPlanJobDispatcher extends PlanJobDispatcher {
  /** Resolves once no job is under way. */
  idle(): Promise<void>;
}

/** `workers[kind]` is the handler that takes `{ planJobId }`; its failures are logged, the job records its own. */
export function createInProcessPlanJobDispatcher(
  workers: Readonly<Record<PlanJobKind, (payload: { planJobId: string }) => Promise<unknown>>>,
): InProcessPlanJobDispatcher {
  const running = new Set<Promise<void>>();
  return {
    async dispatch({ jobId, kind }) {
      const work = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => workers[kind]({ planJobId: jobId }))
        .then(
          () => undefined,
          (error: unknown) => console.error(`cairn: the ${kind} job ${jobId} failed`, error),
        )
        .finally(() => running.delete(work));
      running.add(work);
    },
    async idle() {
      while (running.size > 0) await Promise.all(running);
    },
  };
}
