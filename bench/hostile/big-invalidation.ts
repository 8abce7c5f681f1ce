/**
 * `bench:hostile`'s big invalidation: a completed run of a root and 1,999 steps that depend on it (every step
 * watching one resource) is invalidated at its root through the API, then again by one signed webhook naming the
 * resource, while the probe asks `/health`. Before the frontier forgot the generations a move ends, the first of
 * these grew the server past 4 GB and killed it. Reported per case: the answer, /health, and the server's resident
 * set growth (peak against the reset before the case).
 */

import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import { signWebhook } from '../../shared/webhooks/signature.ts';

export const BIG = {
  steps: 2_000,
  source: 'bench',
  secret: 'bench-webhook-secret',
  resourceKey: 'bench:big-invalidation',
} as const;

export interface BigAnswer {
  readonly name: string;
  readonly status: number;
  readonly code: string;
  readonly ms: number;
}

export interface BigContext<M> {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly echo: Pick<PlanStep, 'inputSchema' | 'outputSchema'>;
  /** Runs the load while the probe asks /health, until the stack has settled. */
  readonly measure: (load: () => Promise<BigAnswer[]>) => Promise<M>;
}

async function post(
  name: string,
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
): Promise<BigAnswer> {
  const started = performance.now();
  const response = await fetch(url, { method: 'POST', headers, body });
  const json = (await response.json().catch(() => ({}))) as { error?: { code?: string }; stepIds?: unknown[] };
  const code = json.error?.code ?? (Array.isArray(json.stepIds) ? `${json.stepIds.length} steps` : '');
  return { name, status: response.status, code, ms: performance.now() - started };
}

/** The run, invalidated by request and then by webhook; each case measured on its own. */
export async function bigInvalidations<M>(context: BigContext<M>): Promise<{ name: string; measure: M }[]> {
  const { url, headers, echo } = context;
  const step = (id: string, dependsOn: string[]): PlanStep => ({
    id,
    title: `step ${id}`,
    target: T.echo,
    dependsOn,
    inputSchema: echo.inputSchema,
    outputSchema: echo.outputSchema,
    input: { value: id },
    watches: [BIG.resourceKey],
  });
  const steps = [step('r', []), ...Array.from({ length: BIG.steps - 1 }, (_, i) => step(`s${i}`, ['r']))];
  const plan = { schemaVersion: 1, revision: 1, objective: 'big invalidation', steps };
  const started = await fetch(`${url}/runs`, { method: 'POST', headers, body: JSON.stringify({ plan }) });
  const { runId } = (await started.json()) as { runId?: string };
  if (started.status !== 202 || runId === undefined) throw new Error(`POST /runs answered ${started.status}`);
  // Measured too: what running the 2,000 steps the first time costs, to read the invalidations against.
  const results = [
    { name: `run of ${BIG.steps} steps (for comparison)`, measure: await context.measure(async () => []) },
  ];

  const byRequest = `invalidate the root of ${BIG.steps} steps (API)`;
  results.push({
    name: byRequest,
    measure: await context.measure(async () => [
      await post(byRequest, `${url}/runs/${runId}/steps/r/invalidate`, headers, JSON.stringify({ reason: 'bench' })),
    ]),
  });

  const byWebhook = `invalidate ${BIG.steps} watchers (webhook)`;
  const body = JSON.stringify({ resourceKey: BIG.resourceKey });
  const signed = signWebhook(BIG.secret, new TextEncoder().encode(body), Math.floor(Date.now() / 1000));
  results.push({
    name: byWebhook,
    measure: await context.measure(async () => [
      await post(byWebhook, `${url}/webhooks/${BIG.source}`, { 'content-type': 'application/json', ...signed }, body),
    ]),
  });

  const run = (await (await fetch(`${url}/runs/${runId}?limit=1`, { headers })).json()) as { status?: string };
  if (run.status !== 'complete') throw new Error(`the big run ended ${run.status}, not complete`);
  return results;
}
