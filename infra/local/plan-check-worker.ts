/**
 * A worker thread of the plan-check pool (./plan-check-pool.ts): loads the catalog it was given once, then runs
 * each job it is sent (shared/api/plan-requests.ts, the same function the API runs inline) and answers its outcome.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type PlanRequestJob, runPlanRequestJob } from '../../shared/api/plan-requests.ts';
import { loadCatalog } from '../../shared/plan/catalog.ts';
import type { Capability } from '../../shared/plan/schema.ts';
import type { PlanLimits } from '../../shared/plan/validate.ts';

export interface PlanCheckWorkerData {
  readonly capabilities: readonly Capability[];
  readonly limits: PlanLimits;
}

const data = workerData as PlanCheckWorkerData;
const context = { catalog: loadCatalog({ capabilities: data.capabilities }), limits: data.limits };
const port = parentPort;
if (port === null) throw new Error('plan-check-worker runs as a worker thread');

port.on('message', ({ id, job }: { id: number; job: PlanRequestJob }) => {
  try {
    port.postMessage({ id, outcome: runPlanRequestJob(job, context) });
  } catch (error) {
    port.postMessage({ id, failure: error instanceof Error ? error.message : String(error) });
  }
});
port.postMessage({ ready: true });
