/**
 * Planning jobs on DynamoDB: one item per job, `PLANJOB#<jobId>` / `PLANJOB`, written `pending` by the API and
 * finished once by its worker (a condition on `pending`: a repeated invocation cannot overwrite the first outcome).
 * A found plan is a JSON attribute, so a large one goes out of line like any other large value (dynamo-ops.ts).
 * The item expires a day after it was made (TTL): a job is an answer to poll for, not a record to keep.
 */
import { ConflictError } from '../../errors.ts';
import type { PlanJobRecord } from '../../ports/plan-jobs.ts';
import type { Store } from '../../ports/store.ts';
import {
  decodeFields,
  encodeFields,
  enumField,
  type FieldCodecs,
  type Item,
  json,
  stringField,
} from './dynamo-attributes.ts';
import { ENTITY_ATTRIBUTE, stringItem } from './dynamo-codec.ts';
import { ExpressionScope, UpdateBuilder } from './dynamo-expressions.ts';
import { conditionalPut, conditionalUpdate, type DynamoContext, getItem } from './dynamo-ops.ts';
import { itemKeys, PARTITION_KEY, TTL_ATTRIBUTE } from './table-layout.ts';

type PlanJobOperations = Pick<Store, 'putPlanJob' | 'getPlanJob' | 'finishPlanJob'>;

/** How long a job can be polled for. */
export const PLAN_JOB_RETENTION_SECONDS = 86_400;

const planJobCodecs: FieldCodecs<PlanJobRecord> = {
  jobId: stringField,
  tenant: stringField,
  request: json<PlanJobRecord['request']>(),
  status: enumField(['pending', 'succeeded', 'failed'] as const),
  createdAt: stringField,
  finishedAt: stringField,
  result: json<NonNullable<PlanJobRecord['result']>>(),
  error: json<NonNullable<PlanJobRecord['error']>>(),
};

const decodePlanJob = (item: Item): PlanJobRecord =>
  decodeFields(planJobCodecs, item, ['jobId', 'request', 'status', 'createdAt']);

export function planJobOperations(ctx: DynamoContext): PlanJobOperations {
  return {
    async putPlanJob(job) {
      const scope = new ExpressionScope();
      const expiresAt = Math.floor(Date.parse(job.createdAt) / 1000) + PLAN_JOB_RETENTION_SECONDS;
      const item: Item = {
        ...stringItem({ ...itemKeys.planJob(job.jobId), [ENTITY_ATTRIBUTE]: 'planJob' }),
        ...encodeFields(planJobCodecs, job),
        [TTL_ATTRIBUTE]: { N: String(expiresAt) },
      };
      if (!(await conditionalPut(ctx, item, scope, scope.notExists(PARTITION_KEY))))
        throw new ConflictError(`plan job ${job.jobId} already exists`, { context: { jobId: job.jobId } });
    },

    async getPlanJob(jobId) {
      const item = await getItem(ctx, itemKeys.planJob(jobId));
      return item === undefined ? undefined : decodePlanJob(item);
    },

    async finishPlanJob(jobId, outcome) {
      const scope = new ExpressionScope();
      const update = new UpdateBuilder(scope)
        .set('status', { S: outcome.status })
        .set('finishedAt', { S: outcome.finishedAt });
      if (outcome.status === 'succeeded') update.set('result', { S: JSON.stringify(outcome.result) });
      else update.set('error', { S: JSON.stringify(outcome.error) });
      const condition = scope.equals('status', { S: 'pending' }, 'pending');
      const item = await conditionalUpdate(ctx, itemKeys.planJob(jobId), scope, update, condition);
      return item === undefined ? undefined : decodePlanJob(item);
    },
  };
}
