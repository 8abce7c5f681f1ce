/**
 * The invalidator: stale-dependency invalidation from outside events and on request. A ResourceChanged event marks
 * every step watching its key stale, in running and in finished runs (a finished run reopens and reaches a new
 * terminal state); `POST /runs/{id}/steps/{stepId}/invalidate` does the same for one step (or group).
 *
 * Delivery is at least once and in no particular order: an event is handled once per event id (an idempotency
 * record `invalidation#<eventId>`), and a watcher whose current generation began after the change (a newer event
 * got there first) is not stale, so a duplicate or an older event changes nothing.
 *
 * An event has few deliveries (EventBridge's target, then Lambda's two async retries: three), fewer than the tries a
 * client gives an invalidation it asked for through the API, and one run's invalidation is many store calls long,
 * any of which a throttle or a timeout may fail. Once the deliveries are spent part-way, the steps it moved wait in
 * a new generation nobody starts, and a reopened run stays open for good. So the invalidator's reads are tried again
 * in place, and so is each run's invalidation as a whole, under the event's key, which makes a repeat carry on from
 * what the try before it did.
 */
import { isBeingCancelled, takesInvalidation } from '../engine/statuses.ts';
import { ConflictError, isRetryable, NotFoundError } from '../errors.ts';
import type { RunRecord } from '../ports/store.ts';
import type { CoordinatorDeps } from './coordinator-types.ts';
import { createInterpreter, type Interpreter } from './interpreter.ts';
import { invalidateInRun, type RunInvalidation } from './invalidation-run.ts';
import { withReadsTriedAgain } from './read-again.ts';
import { tryAgain, workAgainPolicy, writeAgainWhileRetryable } from './write-again.ts';

export type { RunInvalidation } from './invalidation-run.ts';

/** The invalidator changes steps and runs exactly as the coordinator does, with the same dependencies. */
export type InvalidatorDeps = CoordinatorDeps;

export interface InvalidateResourceRequest {
  readonly resourceKey: string;
  /** Equal for every delivery of the same change (the webhook's delivery id, else the bus event id). */
  readonly eventId: string;
  /** When the change was reported (the event's time); absent: now. */
  readonly changedAt?: string | undefined;
}

export interface InvalidateResourceResult {
  /** The event was handled before (or is being handled): nothing was done. */
  readonly duplicate: boolean;
  /** The runs with watchers of the resource, and what was invalidated in each. */
  readonly runs: readonly RunInvalidation[];
}

export interface InvalidateStepRequest {
  readonly runId: string;
  /** A step or a group (all its executable descendants) of the run's current plan. */
  readonly stepId: string;
  readonly reason?: string | undefined;
  /** Makes a repeated request (a client retry) answer the first one's result instead of invalidating again. */
  readonly requestId?: string | undefined;
}

export interface Invalidator {
  invalidateResource(request: InvalidateResourceRequest): Promise<InvalidateResourceResult>;
  /** NotFoundError for an unknown run or step; ConflictError for a run that has not started, was cancelled or is being cancelled. */
  invalidateStep(request: InvalidateStepRequest): Promise<RunInvalidation>;
}

/** How long a handled event id is remembered (EventBridge retries for up to a day). */
export const HANDLED_EVENT_RETENTION_SECONDS = 7 * 86_400;
/** How long an unfinished handling keeps a duplicate away before another delivery may take over. */
export const HANDLING_TIMEOUT_SECONDS = 300;

export const DEFAULT_INVALIDATION_REASON = 'invalidated on request';

/** One run's invalidation is tried again in place as a whole (its repeat skips the moves made), as the replanner's answer is. */
const RUN_INVALIDATION_POLICY = workAgainPolicy(isRetryable);

export function createInvalidator(given: InvalidatorDeps): Invalidator {
  const deps = { ...given, store: withReadsTriedAgain(given.store) };
  const ctx = createInterpreter(deps);
  return {
    invalidateResource: (request) => invalidateResource(ctx, request),
    invalidateStep: (request) => invalidateStep(ctx, request),
  };
}

const epochSeconds = (ctx: Interpreter): number => Math.floor(ctx.deps.clock().getTime() / 1000);

/** Runs `work` once per key; a repeat gets the first result (or undefined while the first is still at work). */
async function once<T>(ctx: Interpreter, key: string, work: () => Promise<T>): Promise<{ first: boolean; result?: T }> {
  const { store } = ctx.deps;
  const now = epochSeconds(ctx);
  const existing = await store.beginIdempotent(key, now + HANDLING_TIMEOUT_SECONDS, now);
  if (existing)
    return existing.status === 'completed' ? { first: false, result: existing.result as T } : { first: false };
  let result: T;
  try {
    result = await work();
  } catch (error) {
    // Let the redelivery (or the client's retry) do it again: every step of the work is safe to repeat. A lost abort
    // would leave the record in progress: every retry would be told the work is still being handled, and a run the
    // work had reopened would stay open with nothing to move it.
    await writeAgainWhileRetryable(() => store.abortIdempotent(key));
    throw error;
  }
  const expiresAt = epochSeconds(ctx) + HANDLED_EVENT_RETENTION_SECONDS;
  await writeAgainWhileRetryable(() => store.completeIdempotent(key, result, expiresAt));
  return { first: true, result };
}

/** The run was cancelled before `time` (an ISO instant; absent: not known to be). */
function cancelledBefore(run: RunRecord, time: string | undefined): boolean {
  const ended = run.terminal === undefined || run.status !== 'cancelled' ? Number.NaN : Date.parse(run.terminal.at);
  return time !== undefined && ended < Date.parse(time);
}

async function invalidateResource(
  ctx: Interpreter,
  request: InvalidateResourceRequest,
): Promise<InvalidateResourceResult> {
  const { resourceKey } = request;
  const key = `invalidation#${request.eventId}`;
  const handled = await once(ctx, key, async () => {
    const watchers = await ctx.deps.store.listWatchers(resourceKey);
    const byRun = new Map<string, string[]>();
    for (const w of watchers) byRun.set(w.runId, [...(byRun.get(w.runId) ?? []), w.stepId]);
    const runs: RunInvalidation[] = [];
    // One run after the other: a change watched by many runs must not open a socket per run at once.
    for (const [runId, stepIds] of byRun) {
      const first = await ctx.deps.store.getRun(runId);
      // A run cancelled (or being cancelled) is left alone, but for what an earlier delivery of this change moved in it
      // before the cancel: invalidateInRun finishes that and nothing else. One that ended before the change was
      // reported cannot have had anything moved by it (and need not be read).
      if (!first || first.status === 'planning' || cancelledBefore(first, request.changedAt)) continue;
      const { byId } = await ctx.plan(first);
      // An entry of an earlier revision whose step no longer watches the key (or no longer exists) is left out.
      const roots = stepIds.filter((id) => byId.get(id)?.watches?.includes(resourceKey) === true);
      if (roots.length === 0) continue;
      const reason = `resource changed: ${resourceKey}`;
      const resourceChange = { changedAt: request.changedAt };
      const invalidation = await tryAgain(RUN_INVALIDATION_POLICY, async (tries) => {
        // A repeat looks at the run as the try before it left it (reopened, say).
        const run = tries === 1 ? first : await ctx.getRun(runId);
        return invalidateInRun(ctx, run, roots, reason, { resourceChange, key });
      });
      runs.push(invalidation);
    }
    return runs;
  });
  return { duplicate: !handled.first, runs: handled.first ? (handled.result ?? []) : [] };
}

async function invalidateStep(ctx: Interpreter, request: InvalidateStepRequest): Promise<RunInvalidation> {
  // A request without a key is its own invalidation: its key only lets it find a write whose answer it lost.
  const key =
    request.requestId === undefined
      ? `invalidation#request#${ctx.deps.newId()}`
      : `invalidation#request#${request.runId}#${request.requestId}`;
  const work = async (): Promise<RunInvalidation> => {
    const { runId, stepId } = request;
    const run = await ctx.getRun(runId);
    const refused = (state: RunRecord): ConflictError =>
      new ConflictError(
        `run ${runId} is ${isBeingCancelled(state) ? 'being cancelled' : state.status}: its steps cannot be invalidated`,
        { context: { runId, status: state.status } },
      );
    // A run its cancel has marked is refused as a cancelled one is: the cancel closes whatever would move. Without a
    // key nothing of this request can have moved; with one, a repeat finishes what its earlier try moved first.
    if (!takesInvalidation(run) && request.requestId === undefined) throw refused(run);
    const { graph } = await ctx.plan(run);
    if (!graph.has(stepId)) {
      throw new NotFoundError(`run ${runId} has no step ${stepId}`, { context: { runId, stepId } });
    }
    // Tried in place like a resource change's: a client that takes the 5xx of a try failed part-way and never asks
    // again would leave moved steps in a generation nobody starts.
    const done = await tryAgain(RUN_INVALIDATION_POLICY, async (tries) =>
      invalidateInRun(
        ctx,
        tries === 1 ? run : await ctx.getRun(runId),
        [stepId],
        request.reason ?? DEFAULT_INVALIDATION_REASON,
        { key },
      ),
    );
    // The run was cancelled before or while this was tried: refused, whatever an earlier try had moved (now closed).
    if (done.cut === true) throw refused(await ctx.getRun(runId));
    return done;
  };
  if (request.requestId === undefined) return work();
  const handled = await once(ctx, key, work);
  if (handled.result !== undefined) return handled.result;
  throw new ConflictError('the same invalidation request is still being handled', {
    context: { runId: request.runId, requestId: request.requestId },
    retryable: true,
  });
}
