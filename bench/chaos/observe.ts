/**
 * Reads what one run left, from outside: its view (GET /runs/{id}, every page), its current plan (for each step's
 * retry policy), each step's attempts of every generation (GET /runs/{id}/steps/{stepId}), its audit log (GET
 * /runs/{id}/events, every page) and its entries of the conformance ledger (GET /conformance/ledger, read once).
 */
import { CONFORMANCE_TARGETS } from '../../shared/capabilities/conformance.ts';
import { DEFAULT_MAX_RETRIES } from '../../shared/plan/schema.ts';
import type { ApiClient } from './client.ts';
import type { EventObservation, LedgerObservation, RunObservation, StepObservation } from './invariants/types.ts';

interface ViewPage {
  status: string;
  terminal?: { state: string; reason: string };
  steps: {
    id: string;
    target: string | null;
    dependsOn: string[];
    status: string;
    generation: number | null;
    error: { code: string; message: string } | null;
  }[];
  nextCursor?: string;
}

interface AttemptView {
  generation: number;
  attempt: number;
  outcome: string;
  startedAt: string;
  finishedAt?: string;
  error?: { code: string; message: string } | null;
}

export interface LedgerEntryView extends LedgerObservation {
  readonly runId: string;
}

/** Mutating capabilities write the ledger; in the conformance pack that is `tool:conformance.ledger` alone. */
const MUTATING = new Set<string>([CONFORMANCE_TARGETS.ledger]);

async function pages<P extends { nextCursor?: string }>(
  api: ApiClient,
  path: (cursor: string | undefined) => string,
): Promise<P[]> {
  const all: P[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.get<P>(path(cursor));
    all.push(page);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return all;
}

const withCursor = (base: string, cursor: string | undefined, sep = '?') =>
  cursor === undefined ? base : `${base}${sep}cursor=${encodeURIComponent(cursor)}`;

export async function readLedger(api: ApiClient): Promise<LedgerEntryView[]> {
  return (await api.get<{ entries: LedgerEntryView[] }>('/conformance/ledger')).entries;
}

export async function observeRun(
  api: ApiClient,
  run: { runId: string; label: string; endedAfterMs: number | null; boundMs: number; quiet: boolean },
  ledger: readonly LedgerEntryView[],
): Promise<RunObservation> {
  const { runId } = run;
  const views = await pages<ViewPage>(api, (cursor) => withCursor(`/runs/${runId}`, cursor));
  const first = views[0] as ViewPage;
  const viewSteps = views.flatMap((v) => v.steps);
  const plan = await api
    .get<{ plan: { steps: { id: string; target: string | null; maxRetries?: number }[] } }>(`/runs/${runId}/plan`)
    .catch(() => undefined);
  const planned = new Map((plan?.plan.steps ?? []).map((s) => [s.id, s]));
  const steps: StepObservation[] = [];
  for (const step of viewSteps) {
    if (step.target === null) continue; // a group: no executions of its own
    const detail = await api.get<{ attempts: AttemptView[] }>(`/runs/${runId}/steps/${encodeURIComponent(step.id)}`);
    const human = step.target.startsWith('human:');
    steps.push({
      id: step.id,
      target: step.target,
      dependsOn: step.dependsOn,
      status: step.status,
      generation: step.generation,
      attempts: detail.attempts.map((a) => ({
        generation: a.generation,
        attempt: a.attempt,
        outcome: a.outcome,
        startedAt: a.startedAt,
        ...(a.finishedAt === undefined ? {} : { finishedAt: a.finishedAt }),
        ...(a.error ? { error: `${a.error.code}: ${a.error.message}` } : {}),
      })),
      ...(step.error ? { error: `${step.error.code}: ${step.error.message}` } : {}),
      mutating: MUTATING.has(step.target),
      ...(human ? {} : { maxAttempts: (planned.get(step.id)?.maxRetries ?? DEFAULT_MAX_RETRIES) + 1 }),
    });
  }
  const events = (
    await pages<{ events: EventObservation[]; nextCursor?: string }>(api, (cursor) =>
      withCursor(`/runs/${runId}/events`, cursor),
    )
  ).flatMap((page) => page.events);
  return {
    runId,
    label: run.label,
    status: first.status,
    ...(first.terminal ? { terminal: { state: first.terminal.state, reason: first.terminal.reason } } : {}),
    endedAfterMs: run.endedAfterMs,
    boundMs: run.boundMs,
    quiet: run.quiet,
    steps,
    events: events.map((e) => ({
      seq: e.seq,
      type: e.type,
      at: e.at,
      ...(e.stepId === undefined ? {} : { stepId: e.stepId }),
      ...(e.generation === undefined ? {} : { generation: e.generation }),
      detail: e.detail,
    })),
    ledger: ledger
      .filter((entry) => entry.runId === runId)
      .map((e) => ({ entryId: e.entryId, stepId: e.stepId, generation: e.generation, attempt: e.attempt, at: e.at })),
  };
}
