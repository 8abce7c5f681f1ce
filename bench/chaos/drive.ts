/**
 * Drives one chaos run as a client would: POST /runs with the generated plan (an Idempotency-Key, so a retried
 * POST is the same run), then, while it runs, the suite's cancel and invalidations at their times (from when its
 * steps start moving), until the run has ended (terminal, or paused with the engine's reason) after the last
 * action, or the bound has passed.
 */
import { signWebhook } from '../../shared/webhooks/signature.ts';
import type { ApiClient } from './client.ts';
import { CHAOS_WEBHOOK_SOURCE, type ChaosAction, type ChaosPlan } from './plan-generator.ts';

export interface ActionCounts {
  cancels: number;
  invalidations: number;
  /** Invalidations the API refused (409: a cancelled or not yet started run). */
  invalidationsRefused: number;
  /** Webhook deliveries accepted (202), each a ResourceChanged for the invalidator: whether it took is not told. */
  webhooks: number;
  /** Actions whose call failed otherwise (after the client's retries). */
  actionsFailed: number;
}

export interface DriveResult {
  readonly runId: string;
  /** ms from POST /runs to the run's end after its last action; null: not within the bound. */
  readonly endedAfterMs: number | null;
  /** What each action met, in the order made (for a dump: when it was made and what the API answered). */
  readonly acted: readonly ActionOutcome[];
}

export interface ActionOutcome {
  readonly action: ChaosAction;
  /** ms from POST /runs to the call, and to its answer. */
  readonly atMs: number;
  readonly answeredMs: number;
  /** The API's status, or null when the call failed after the client's retries. */
  readonly status: number | null;
}

interface RunSnapshot {
  readonly status: string;
  readonly terminal?: { readonly state: string; readonly reason: string };
}

/** Terminal, or paused with the engine's terminal record (a reason); a gate waiting is paused without one. */
export const hasEnded = (run: RunSnapshot): boolean =>
  ['complete', 'failed', 'cancelled'].includes(run.status) ||
  (run.status === 'paused' && run.terminal?.state === 'paused' && run.terminal.reason !== '');

export interface DriveOptions {
  readonly api: ApiClient;
  readonly plan: ChaosPlan;
  readonly objective: string;
  readonly idempotencyKey: string;
  readonly boundMs: number;
  readonly counts: ActionCounts;
  /** The secret the stack holds for the suite's webhook source. */
  readonly webhookSecret: string;
  /** Told the run id as soon as it is known (the approval responder starts answering). */
  readonly onStarted: (runId: string) => void;
  readonly pollMs?: number;
}

/**
 * One action. An invalidation carries an Idempotency-Key of its own: the client retries a 5xx, and an invalidation
 * whose answer was lost after it took effect must not invalidate again.
 */
async function act(
  api: ApiClient,
  runId: string,
  action: ChaosAction,
  key: string,
  options: Pick<DriveOptions, 'counts' | 'webhookSecret'>,
): Promise<number | null> {
  const { counts } = options;
  if (action.kind === 'cancel') {
    const answer = await api.call('POST', `/runs/${runId}/cancel`).catch(() => undefined);
    if (answer?.status === 200) counts.cancels += 1;
    else counts.actionsFailed += 1;
    return answer?.status ?? null;
  }
  if (action.via.kind === 'webhook') {
    // Signed once: a retry after a lost answer is the same delivery, which the stack acknowledges without publishing.
    const body = { resourceKey: action.via.resourceKey };
    const headers = signWebhook(
      options.webhookSecret,
      new TextEncoder().encode(JSON.stringify(body)),
      Math.floor(Date.now() / 1000),
    );
    const answer = await api.call('POST', `/webhooks/${CHAOS_WEBHOOK_SOURCE}`, body, headers).catch(() => undefined);
    if (answer?.status === 202 || answer?.status === 200) counts.webhooks += 1;
    else counts.actionsFailed += 1;
    return answer?.status ?? null;
  }
  const answer = await api
    .call(
      'POST',
      `/runs/${runId}/steps/${encodeURIComponent(action.stepId)}/invalidate`,
      { reason: 'chaos' },
      { 'idempotency-key': key },
    )
    .catch(() => undefined);
  if (answer?.status === 202) counts.invalidations += 1;
  else if (answer?.status === 409) counts.invalidationsRefused += 1;
  else counts.actionsFailed += 1;
  return answer?.status ?? null;
}

export async function driveRun(options: DriveOptions): Promise<DriveResult> {
  const { api, plan } = options;
  const started = performance.now();
  const posted = await api.call(
    'POST',
    '/runs',
    { plan: { schemaVersion: 1, revision: 1, objective: options.objective, steps: plan.steps } },
    { 'idempotency-key': options.idempotencyKey },
  );
  const runId = (posted.json as { runId?: string } | undefined)?.runId;
  if (posted.status !== 202 || runId === undefined)
    throw new Error(`POST /runs answered ${posted.status}: ${JSON.stringify(posted.json)}`);
  options.onStarted(runId);

  const timed = plan.actions.filter((a) => a.kind !== 'invalidate-after-finish').sort((a, b) => at(a) - at(b));
  const afterFinish = plan.actions.filter((a) => a.kind === 'invalidate-after-finish');
  // Actions are timed from when the run's steps start moving: a run may plan for a while on a busy machine, and
  // an invalidation before that is only refused.
  let movingSince: number | undefined;
  let done = 0;
  const acted: ActionOutcome[] = [];
  const perform = async (action: ChaosAction) => {
    const atMs = Math.round(performance.now() - started);
    const status = await act(api, runId, action, `${options.idempotencyKey}-action-${done++}`, options);
    acted.push({ action, atMs, answeredMs: Math.round(performance.now() - started), status });
  };
  for (;;) {
    const run = await api.get<RunSnapshot>(`/runs/${runId}?limit=1`).catch(() => undefined);
    const now = performance.now();
    if (movingSince === undefined && run !== undefined && run.status !== 'planning') movingSince = now;
    if (movingSince !== undefined && timed.length > 0 && at(timed[0] as ChaosAction) <= now - movingSince) {
      await perform(timed.shift() as ChaosAction);
      continue;
    }
    if (run && timed.length === 0 && hasEnded(run)) {
      const next = afterFinish.shift();
      if (next === undefined) return { runId, endedAfterMs: Math.round(now - started), acted };
      await perform(next);
      continue;
    }
    if (now - started > options.boundMs) return { runId, endedAfterMs: null, acted };
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 50));
  }
}

const at = (action: ChaosAction): number => ('atMs' in action ? action.atMs : Number.POSITIVE_INFINITY);
