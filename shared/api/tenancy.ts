/**
 * Tenants: every caller is in one (caller.ts; `default` when its proof names none), and sees only its tenant's runs,
 * approvals and planning jobs. Another tenant's is answered exactly as one that does not exist: 404 E_NOT_FOUND,
 * never 403, so a caller cannot even learn that an id exists elsewhere.
 *
 * One guard, in front of every route with an id in its path (path-ids.ts ID_ROUTE_PATTERNS), checks the id's owner
 * before the route runs, so no route can forget it: a run (and through it its steps, events, commands, plan and
 * every change to it), an approval, a planning job. Listings are the tenant's own by construction: the store reads
 * only the tenant's index partitions (shared/adapters/aws/table-layout.ts).
 */
import type { MiddlewareHandler } from 'hono';
import { tenantOf } from '../config/defaults.ts';
import type { Store } from '../ports/store.ts';
import type { ApiEnv } from './deps.ts';
import { notFound } from './errors.ts';

type Owned = { readonly tenant?: string | undefined } | undefined;

/** Whether `record` (absent: nothing to hide) belongs to another tenant than the caller's. */
export const elsewhere = (record: Owned, tenant: string): boolean =>
  record !== undefined && tenantOf(record) !== tenant;

/**
 * 404 for an id of another tenant's. It reads what the route reads anyway (one consistent read of the run, approval
 * or job item); an id that does not exist is left for the route to answer, as before.
 */
export function tenantGuard(store: Pick<Store, 'getRun' | 'getApproval' | 'getPlanJob'>): MiddlewareHandler<ApiEnv> {
  // Several id patterns may match one path: each request is checked once.
  const checked = new WeakSet<Request>();
  return async (c, next) => {
    const caller = c.get('caller');
    // The public routes carry no caller and no id of a tenant's.
    if (caller === undefined || checked.has(c.req.raw)) return next();
    checked.add(c.req.raw);
    const { tenant } = caller;
    const params = c.req.param() as Record<string, string | undefined>;
    const { runId, id, jobId } = params;
    if (runId !== undefined && elsewhere(await store.getRun(runId), tenant)) throw notFound(`run ${runId} not found`);
    if (id !== undefined && elsewhere(await store.getApproval(id), tenant)) throw notFound(`approval ${id} not found`);
    if (jobId !== undefined && elsewhere(await store.getPlanJob(jobId), tenant))
      throw notFound(`plan job ${jobId} not found`);
    await next();
  };
}
