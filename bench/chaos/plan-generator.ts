/**
 * Randomized chaos plans, all drawn from one seed: a DAG shape (chain, fork-join, layered, random), each step a
 * conformance capability (echo, sleep, ledger, flaky, fail, a gate, a low-confidence agent that asks for review,
 * a step skipped by its `when`), and what the suite does to the run while it runs (cancel, invalidations, an
 * invalidation once it has finished). A person's answers are drawn per approval (`decisionFor`), not from the
 * shared stream, so they do not depend on the order in which approvals show up.
 */
import { conformanceCatalog, CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import { between, chain, forkJoin, layered, type Node, random, randomParents } from '../engine/dags.ts';

export type StepKind = 'echo' | 'sleep' | 'ledger' | 'flaky' | 'fail' | 'gate' | 'review' | 'skipped';
export type Shape = 'chain' | 'fork-join' | 'layered' | 'random';

/** Something the suite does to a run: `atMs` after its steps start moving, or once it has first finished. */
export type ChaosAction =
  | { readonly kind: 'cancel'; readonly atMs: number }
  | { readonly kind: 'invalidate'; readonly stepId: string; readonly atMs: number; readonly via: InvalidationVia }
  | { readonly kind: 'invalidate-after-finish'; readonly stepId: string; readonly via: InvalidationVia };

/**
 * How an invalidation reaches the run: the API's invalidate route, or a signed webhook naming a resource the step
 * watches (ResourceChanged on the bus, then the invalidator: the path the bus faults act on).
 */
export type InvalidationVia = { readonly kind: 'api' } | { readonly kind: 'webhook'; readonly resourceKey: string };

/** The webhook source the suite signs its deliveries as (its secret is set for the stack it boots). */
export const CHAOS_WEBHOOK_SOURCE = 'chaos';

export interface ChaosPlan {
  readonly seed: number;
  readonly shape: Shape;
  readonly kinds: Readonly<Record<string, StepKind>>;
  readonly steps: PlanStep[];
  readonly actions: readonly ChaosAction[];
}

/**
 * Half of the invalidations go through a webhook, chosen by a hash of the run's seed and the action's index, not
 * from the shared stream: the plans a seed draws stay the ones it drew before webhooks were used.
 */
function viaOf(seed: number, index: number, key: string): InvalidationVia {
  const h = Math.imul((seed ^ (index * 0x9e3779b1)) >>> 0, 0x85ebca6b) >>> 0;
  return (h >>> 16) % 2 === 0 ? { kind: 'api' } : { kind: 'webhook', resourceKey: `chaos:${key}` };
}

/** The steps an invalidation reaches by webhook watch its resource. */
function withWatches(steps: PlanStep[], actions: readonly ChaosAction[]): PlanStep[] {
  const watched = new Map<string, string[]>();
  for (const action of actions)
    if (action.kind !== 'cancel' && action.via.kind === 'webhook')
      watched.set(action.stepId, [...(watched.get(action.stepId) ?? []), action.via.resourceKey]);
  return steps.map((step) => {
    const keys = watched.get(step.id);
    return keys === undefined ? step : { ...step, watches: keys };
  });
}

export interface GeneratorOptions {
  /** Makes the flaky keys of this suite its own (the conformance pack counts calls per key, process-wide). */
  readonly namespace: string;
  /** Chances of a cancel and of invalidations per run (defaults 0.2 and 0.3). */
  readonly cancelRate?: number;
  readonly invalidateRate?: number;
}

const KIND_WEIGHTS: readonly (readonly [StepKind, number])[] = [
  ['echo', 22],
  ['sleep', 24],
  ['ledger', 20],
  ['flaky', 12],
  ['fail', 3],
  ['gate', 8],
  ['review', 5],
  ['skipped', 5],
];

const TARGET_OF: Readonly<Record<StepKind, string>> = {
  echo: T.echo,
  sleep: T.sleep,
  ledger: T.ledger,
  flaky: T.flaky,
  fail: T.fail,
  gate: T.approver,
  review: T.scripted,
  skipped: T.echo,
};

const capabilities = new Map(conformanceCatalog().capabilities.map((c) => [c.target, c]));

function weighted<K>(rnd: () => number, table: readonly (readonly [K, number])[]): K {
  const total = table.reduce((sum, [, w]) => sum + w, 0);
  let roll = rnd() * total;
  for (const [value, w] of table) {
    roll -= w;
    if (roll < 0) return value;
  }
  return (table.at(-1) as readonly [K, number])[0];
}

function shapeOf(shape: Shape, rnd: () => number): Node[] {
  switch (shape) {
    case 'chain':
      return chain(between(rnd, 2, 6));
    case 'fork-join':
      return forkJoin(between(rnd, 2, 3), 1, 3, rnd);
    case 'layered':
      return layered(between(rnd, 2, 3), between(rnd, 2, 3), rnd);
    case 'random':
      return randomParents(between(rnd, 4, 10), 3, rnd);
  }
}

/** The fields a step of `kind` gets beyond its id, title, target, contracts and edges. */
function fieldsOf(kind: StepKind, key: string, rnd: () => number): Partial<PlanStep> {
  switch (kind) {
    case 'echo':
      return { input: { value: key } };
    case 'skipped':
      return { input: { value: key }, when: '{% false %}' };
    case 'sleep':
      return { input: { ms: between(rnd, 10, 150) } };
    case 'ledger':
      return { input: { entry: key }, rollbackHint: 'the conformance ledger keeps every entry; nothing to undo' };
    case 'flaky':
      // Sometimes more failures than attempts: the step fails for good after its retries.
      return { input: { key, failures: between(rnd, 0, 2) }, maxRetries: between(rnd, 1, 3) };
    case 'fail': {
      const retryable = rnd() < 0.5;
      return { input: { message: `chaos ${key}`, retryable }, maxRetries: retryable ? between(rnd, 0, 2) : 0 };
    }
    case 'gate':
      return { input: { note: key }, approval: { question: `Let ${key} through?`, timeoutSeconds: 120 } };
    case 'review':
      return { input: { output: { key }, confidence: 0.3 }, confidenceThreshold: 0.8 };
  }
}

function stepOf(node: Node, kind: StepKind, key: string, rnd: () => number): PlanStep {
  const target = TARGET_OF[kind];
  const capability = capabilities.get(target);
  if (!capability) throw new Error(`the conformance pack has no ${target}`);
  return {
    id: node.id,
    title: `${kind} ${node.id}`,
    target,
    dependsOn: [...node.dependsOn],
    inputSchema: capability.inputSchema,
    outputSchema: capability.outputSchema,
    ...fieldsOf(kind, key, rnd),
  };
}

const SHAPES: readonly Shape[] = ['chain', 'fork-join', 'layered', 'random'];

/** The plan and the actions of the run with this seed. */
export function generatePlan(seed: number, options: GeneratorOptions): ChaosPlan {
  const rnd = random(seed);
  const shape = SHAPES[Math.floor(rnd() * SHAPES.length)] ?? 'chain';
  const nodes = shapeOf(shape, rnd);
  const kinds: Record<string, StepKind> = {};
  const steps = nodes.map((node) => {
    const kind = weighted(rnd, KIND_WEIGHTS);
    kinds[node.id] = kind;
    return stepOf(node, kind, `${options.namespace}-${seed}-${node.id}`, rnd);
  });
  const ids = nodes.map((n) => n.id);
  const anyStep = () => ids[Math.floor(rnd() * ids.length)] ?? ids[0] ?? '';
  const actions: ChaosAction[] = [];
  const via = () => viaOf(seed, actions.length, `${options.namespace}-${seed}-${actions.length}`);
  if (rnd() < (options.cancelRate ?? 0.2)) actions.push({ kind: 'cancel', atMs: between(rnd, 0, 500) });
  if (rnd() < (options.invalidateRate ?? 0.3))
    for (let i = between(rnd, 1, 2); i > 0; i--)
      actions.push({ kind: 'invalidate', stepId: anyStep(), atMs: between(rnd, 0, 900), via: via() });
  if (rnd() < 0.1) actions.push({ kind: 'invalidate-after-finish', stepId: anyStep(), via: via() });
  return { seed, shape, kinds, steps: withWatches(steps, actions), actions };
}

/** A person's answer to one approval: drawn from the run's seed, the step and its generation. */
export function decisionFor(seed: number, stepId: string, generation: number): { approve: boolean; delayMs: number } {
  let h = seed >>> 0;
  for (const ch of `${stepId}#${generation}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x9e3779b1) >>> 0;
  const rnd = random(h);
  return { approve: rnd() < 0.8, delayMs: between(rnd, 0, 100) };
}

/** The seed of run `index` of a suite seeded with `seed`. */
export const runSeed = (seed: number, index: number): number =>
  (Math.imul(seed ^ 0x5bd1e995, 31) + index * 0x9e3779b1) >>> 0;
