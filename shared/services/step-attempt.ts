/**
 * Everything the executor needs before it may call a capability: the run, the step record (still this generation,
 * still running), its definition in the run's plan revision, the capability, a binding, and the evaluated input
 * checked against the capability's inputSchema. Problems found before an attempt is recorded ('skip') leave no
 * trace; problems of the step itself ('invalid') are recorded on the attempt as a permanent failure.
 */
import { CAPABILITY_ERROR_CODES, type CapabilityFailure } from '../capabilities/capability-errors.ts';
import type { Catalog } from '../plan/catalog.ts';
import { containsExpression } from '../plan/expressions.ts';
import { effectiveUpstream } from '../plan/graph.ts';
import type { SideEffect } from '../plan/schema.ts';
import type { CapabilityCall, CapabilityRegistry } from '../ports/capabilities.ts';
import type { Store } from '../ports/store.ts';
import { idempotencyKey } from './idempotent-call.ts';
import { contextStepIds, evaluateStepInput, graphOf, loadStepContext } from './step-input.ts';

export type PreparedAttempt =
  | { readonly kind: 'skip'; readonly failure: CapabilityFailure }
  | {
      readonly kind: 'invalid';
      readonly target: string;
      readonly input: unknown;
      readonly sideEffect: SideEffect;
      readonly failure: CapabilityFailure;
    }
  | {
      readonly kind: 'ready';
      readonly target: string;
      readonly input: unknown;
      readonly sideEffect: SideEffect;
      readonly call: CapabilityCall;
    };

export interface AttemptRequest {
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
  readonly attempt: number;
}

const permanent = (code: string, message: string, details?: unknown): CapabilityFailure =>
  details === undefined ? { code, message, retryable: false } : { code, message, retryable: false, details };

/** Plan revisions this process last saw per run: a guess at which upstream steps to read along with the step. */
export type RevisionMemory = Map<string, number>;

const REMEMBERED_RUNS = 256;

/**
 * The steps whose outputs the step will most likely need, from the revision its run had last time (revisions are
 * immutable and the store keeps the ones it has read): read in the same round trip as the run and the step. A
 * wrong guess costs nothing but a later read of whatever is missing.
 */
async function likelyContext(store: Store, memory: RevisionMemory, request: AttemptRequest): Promise<string[]> {
  const revision = memory.get(request.runId);
  if (revision === undefined) return [];
  const plan = (await store.getPlanRevision(request.runId, revision))?.plan;
  const definition = plan?.steps.find((s) => s.id === request.stepId);
  if (!plan || !definition) return [];
  const graph = graphOf(plan);
  const evaluate = request.attempt === 1 && containsExpression(definition.input);
  return contextStepIds(graph, request.stepId, effectiveUpstream(graph, request.stepId), evaluate);
}

function remember(memory: RevisionMemory, runId: string, revision: number): void {
  memory.delete(runId);
  if (memory.size >= REMEMBERED_RUNS) memory.delete(memory.keys().next().value ?? '');
  memory.set(runId, revision);
}

export async function prepareAttempt(
  store: Store,
  catalog: Catalog,
  registry: CapabilityRegistry,
  request: AttemptRequest,
  memory: RevisionMemory = new Map(),
): Promise<PreparedAttempt> {
  const { runId, stepId, generation, attempt } = request;
  const likely = await likelyContext(store, memory, request);
  const { run, step, others } = await store.getStepWithRun(runId, stepId, undefined, likely);
  if (run) remember(memory, runId, run.revision);
  if (!run || !step)
    return { kind: 'skip', failure: permanent('E_STEP_NOT_FOUND', `no step ${stepId} in run ${runId}`) };
  if (step.generation !== generation)
    return {
      kind: 'skip',
      failure: permanent('E_STALE_GENERATION', `step ${stepId} is at generation ${step.generation}, not ${generation}`),
    };
  if (step.status !== 'running' && step.status !== 'retrying')
    return { kind: 'skip', failure: permanent('E_STEP_NOT_RUNNING', `step ${stepId} is ${step.status}, not running`) };

  const revision = await store.getPlanRevision(runId, run.revision);
  const definition = revision?.plan.steps.find((s) => s.id === stepId);
  const target = definition?.target ?? '';
  const invalid = (failure: CapabilityFailure, input: unknown = null, sideEffect: SideEffect = 'none') =>
    ({ kind: 'invalid', target: target || `(${stepId})`, input, sideEffect, failure }) as const;
  if (!revision || !definition)
    return invalid(permanent('E_STEP_NOT_FOUND', `plan revision ${run.revision} of ${runId} has no step ${stepId}`));
  if (!target || target.startsWith('human:'))
    return invalid(permanent('E_NOT_EXECUTABLE', `step ${stepId} (${target || 'a group'}) is not run by a capability`));
  const capability = catalog.get(target);
  if (!capability) return invalid(permanent('E_UNKNOWN_TARGET', `${target} is not in the capability catalog`));

  // Attempt 1 has no earlier attempt to take its input from (a gate's claim records one, but gates never get here).
  const recorded = attempt > 1 ? await recordedInput(store, request) : undefined;
  const evaluate = recorded === undefined && containsExpression(definition.input);
  const context = await loadStepContext(store, graphOf(revision.plan), step, evaluate, others);
  let input: unknown = recorded;
  try {
    if (input === undefined)
      input = await evaluateStepInput(definition.input, { objective: run.objective, outputs: context.outputs });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return invalid(permanent('E_INPUT_EXPRESSION', `the input of ${stepId} cannot be evaluated: ${message}`));
  }
  const sideEffect = capability.sideEffect;
  const check = catalog.validateInput(target, input);
  if (!check.ok)
    return invalid(
      permanent(
        CAPABILITY_ERROR_CODES.inputSchema,
        `the input of ${stepId} does not match the inputSchema of ${target}: ${check.errors.join('; ')}`,
        { errors: check.errors },
      ),
      input,
      sideEffect,
    );
  if (!registry.binding(target))
    return invalid(
      permanent(CAPABILITY_ERROR_CODES.noBinding, `no binding is configured for ${target}`),
      input,
      sideEffect,
    );
  const call: CapabilityCall = {
    runId,
    stepId,
    generation,
    attempt,
    target,
    capability,
    input,
    step: {
      title: definition.title,
      ...(definition.description === undefined ? {} : { description: definition.description }),
      ...(definition.successCriteria === undefined ? {} : { successCriteria: definition.successCriteria }),
    },
    objective: run.objective,
    upstreamOutputs: context.direct,
    idempotencyKey: idempotencyKey(runId, stepId, generation),
  };
  return { kind: 'ready', target, input, sideEffect, call };
}

/**
 * The input an earlier attempt of this generation ran with (or the coordinator recorded when it claimed the
 * step): every attempt of a generation gets the same input, even if an expression is not deterministic.
 */
async function recordedInput(store: Store, request: AttemptRequest): Promise<unknown> {
  const attempts = await store.listAttempts(request.runId, request.stepId);
  const earlier = attempts
    .filter((a) => a.generation === request.generation && a.attempt <= request.attempt && a.input !== undefined)
    .sort((a, b) => a.attempt - b.attempt);
  return earlier[0]?.input;
}
