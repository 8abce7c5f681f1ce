/**
 * The planning-job dispatcher deployed (shared/ports/plan-jobs.ts): an asynchronous invocation (`InvocationType:
 * Event`) of the planner Lambda for a plan job, the replanner Lambda for a replan job, with `{ planJobId }`.
 * Lambda queues the event and answers 202 at once; the worker records the job's outcome, and a worker Lambda
 * loses after its own retries leaves the job pending until a poll reports it lost (shared/engine/plan-jobs.ts).
 */
import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { CairnError } from '../../errors.ts';
import type { PlanJobDispatcher, PlanJobKind } from '../../ports/plan-jobs.ts';

export interface LambdaPlanJobOptions {
  readonly client: LambdaClient;
  /** The function that runs each kind of job. */
  readonly functions: Readonly<Record<PlanJobKind, string>>;
}

/** The payload a worker Lambda gets for a job (functions/planner.ts, functions/replanner.ts). */
export const planJobPayload = (jobId: string): { planJobId: string } => ({ planJobId: jobId });

export function createLambdaPlanJobDispatcher(options: LambdaPlanJobOptions): PlanJobDispatcher {
  return {
    async dispatch({ jobId, kind }) {
      const functionName = options.functions[kind];
      const answer = await options.client.send(
        new InvokeCommand({
          FunctionName: functionName,
          InvocationType: 'Event',
          Payload: new TextEncoder().encode(JSON.stringify(planJobPayload(jobId))),
        }),
      );
      // An accepted asynchronous invocation is 202; anything else means the job was not queued.
      if (answer.StatusCode !== 202)
        throw new CairnError('PlanJobDispatchError', `the ${kind} job ${jobId} was not queued (${answer.StatusCode})`, {
          retryable: true,
          context: { jobId, functionName, statusCode: answer.StatusCode },
        });
    },
  };
}
