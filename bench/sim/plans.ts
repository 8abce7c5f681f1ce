/**
 * The simulated world's catalog and plans. The catalog says what the decider needs of each target (whether it
 * mutates, what undoes it) and the settings its runs start with; the simulated executions act by the same table (a
 * mutating target's success writes the conformance ledger, its compensation undoes it). A plan is seeded: a DAG shape
 * (bench/engine/dags.ts), each step a kind (a tool, a mutating tool with or without a compensation, an agent whose
 * low-confidence answers ask for a review, a person's gate, a step its `when` skips), retries and `onFailure`
 * policies, sometimes a saga segment over a stretch of steps and a budget; with each plan, how its steps behave when
 * they run and what a client does to the run meanwhile.
 */
import type { RunSettings, TargetFacts } from '../../shared/engine/run/state.ts';
import type { Plan, PlanStep } from '../../shared/plan/schema.ts';
import { chain, forkJoin, layered, type Node, randomParents } from '../engine/dags.ts';
import type { Rng } from './scheduler.ts';

export const SIM_TARGETS = {
  pure: 'tool:sim.pure',
  idempotent: 'tool:sim.idempotent',
  /** Mutating, undone by `undo`. */
  mutate: 'tool:sim.mutate',
  /** Mutating with no compensation: only a person following its rollbackHint undoes it. */
  mutateBare: 'tool:sim.mutate-bare',
  undo: 'tool:sim.undo',
  agent: 'agent:sim.writer',
  person: 'human:sim.approver',
} as const;

const FACTS: ReadonlyMap<string, TargetFacts> = new Map<string, TargetFacts>([
  [SIM_TARGETS.pure, { sideEffect: 'none' }],
  [SIM_TARGETS.idempotent, { sideEffect: 'idempotent' }],
  [SIM_TARGETS.mutate, { sideEffect: 'mutating', compensateTarget: SIM_TARGETS.undo }],
  [SIM_TARGETS.mutateBare, { sideEffect: 'mutating' }],
  [SIM_TARGETS.undo, { sideEffect: 'mutating' }],
  [SIM_TARGETS.agent, { sideEffect: 'none' }],
  [SIM_TARGETS.person, { sideEffect: 'none' }],
]);

export const simTargets = (target: string): TargetFacts | undefined => FACTS.get(target);

export const isMutating = (target: string | null): boolean =>
  target !== null && FACTS.get(target)?.sideEffect === 'mutating';

/** The settings of one world's runs (one shell serves them all, as one deployment does). */
export function simSettings(rng: Rng): RunSettings {
  return {
    maxReplans: rng.chance(0.5) ? 0 : 2,
    runDeadlineSeconds: rng.int(30, 120) * 60,
    approvalTimeoutSeconds: 600,
    replanWatchSeconds: 120,
    retry: { baseSeconds: 1, capSeconds: 30 },
    traceRetention: rng.chance(0.5) ? 'full' : 'last',
  };
}

export type SimStepKind = 'tool' | 'mutate' | 'mutate-bare' | 'agent' | 'gate' | 'skipped';

/** How a step's attempts go: the chance of each outcome per attempt. */
export interface StepProfile {
  readonly kind: SimStepKind;
  readonly retryable: number;
  readonly permanent: number;
  /** An agent's answer below its confidence threshold (a review follows). */
  readonly lowConfidence: number;
  /** Virtual milliseconds an attempt takes. */
  readonly minMs: number;
  readonly maxMs: number;
  /** Tokens an attempt spends (0: none reported). */
  readonly tokens: number;
}

/** What the client does to a run, at a virtual time after the run was created. */
export type ClientAction =
  | { readonly kind: 'cancel'; readonly atMs: number; readonly compensate: boolean }
  | { readonly kind: 'invalidate'; readonly atMs: number; readonly roots: readonly string[]; readonly repeat: boolean }
  | { readonly kind: 'resource'; readonly atMs: number; readonly resourceKey: string }
  | { readonly kind: 'invalidate-after-finish'; readonly roots: readonly string[] };

export interface SimPlan {
  readonly plan: Plan;
  readonly profiles: ReadonlyMap<string, StepProfile>;
  readonly actions: readonly ClientAction[];
  /** The run machine's planning fails (RejectPlan) instead of starting the run. */
  readonly rejectPlan: boolean;
}

const KINDS: readonly (readonly [SimStepKind, number])[] = [
  ['tool', 40],
  ['mutate', 18],
  ['mutate-bare', 4],
  ['agent', 14],
  ['gate', 14],
  ['skipped', 6],
];

const TARGET: Readonly<Record<SimStepKind, string>> = {
  tool: SIM_TARGETS.pure,
  mutate: SIM_TARGETS.mutate,
  'mutate-bare': SIM_TARGETS.mutateBare,
  agent: SIM_TARGETS.agent,
  gate: SIM_TARGETS.person,
  skipped: SIM_TARGETS.idempotent,
};

const POLICIES = [
  undefined,
  undefined,
  undefined,
  'continue',
  'pause',
  'fail-run',
  'replan',
  'retry-then-fail',
] as const;

function shapeOf(rng: Rng): Node[] {
  const rnd = () => rng.next();
  switch (rng.int(0, 3)) {
    case 0:
      return chain(rng.int(2, 6));
    case 1:
      return forkJoin(rng.int(2, 3), 1, 3, rnd);
    case 2:
      return layered(rng.int(2, 3), rng.int(2, 3), rnd);
    default:
      return randomParents(rng.int(3, 9), 3, rnd);
  }
}

function profileOf(kind: SimStepKind, rng: Rng, budgeted: boolean): StepProfile {
  const flaky = rng.chance(0.35);
  return {
    kind,
    retryable: kind === 'gate' || kind === 'skipped' ? 0 : flaky ? 0.45 : 0.05,
    permanent: kind === 'gate' || kind === 'skipped' ? 0 : rng.chance(0.12) ? 0.5 : 0.02,
    lowConfidence: kind === 'agent' ? 0.4 : 0,
    minMs: 50,
    maxMs: rng.chance(0.2) ? 60_000 : 5_000,
    tokens: budgeted || kind === 'agent' ? rng.int(50, 400) : 0,
  };
}

function stepOf(node: Node, kind: SimStepKind, rng: Rng): PlanStep {
  const policy = rng.pick(POLICIES);
  const step: PlanStep = {
    id: node.id,
    title: `${kind} ${node.id}`,
    target: TARGET[kind],
    dependsOn: [...node.dependsOn],
    input: { key: node.id },
    ...(kind === 'gate' ? {} : { maxRetries: rng.int(0, 3) }),
    ...(policy === undefined ? {} : { onFailure: policy }),
  };
  switch (kind) {
    case 'gate':
      return {
        ...step,
        approval: {
          question: `Let ${node.id} through?`,
          timeoutSeconds: rng.int(1, 15) * 60,
          ...(rng.chance(0.15) ? { onTimeout: 'pause' as const } : {}),
        },
      };
    case 'agent':
      return { ...step, confidenceThreshold: 0.8 };
    case 'skipped':
      return { ...step, when: '{% false %}' };
    case 'mutate-bare':
      return { ...step, rollbackHint: `undo ${node.id} by hand` };
    default:
      return step;
  }
}

/** Marks a stretch of the plan (a step and some of its downstream) as one saga segment. */
function withSegment(steps: PlanStep[], rng: Rng): PlanStep[] {
  const first = rng.int(0, Math.max(0, steps.length - 2));
  const members = new Set([steps[first]?.id]);
  for (const step of steps.slice(first + 1))
    if (step.dependsOn.some((id) => members.has(id)) && rng.chance(0.7)) members.add(step.id);
  return steps.map((step) => (members.has(step.id) ? { ...step, segment: 'saga' } : step));
}

/** The plan of run `index` of a seed, with its steps' behaviour and the client's actions. */
export function generateSimPlan(rng: Rng): SimPlan {
  const nodes = shapeOf(rng);
  const budgeted = rng.chance(0.12);
  const kinds = nodes.map(() => rng.weighted(KINDS));
  let steps = nodes.map((node, i) => stepOf(node, kinds[i] ?? 'tool', rng));
  if (rng.chance(0.35)) steps = withSegment(steps, rng);
  const profiles = new Map(steps.map((s, i) => [s.id, profileOf(kinds[i] ?? 'tool', rng, budgeted)]));
  const ids = steps.map((s) => s.id);
  const actions: ClientAction[] = [];
  if (rng.chance(0.2)) actions.push({ kind: 'cancel', atMs: rng.int(0, 600_000), compensate: rng.chance(0.5) });
  for (let i = rng.chance(0.3) ? rng.int(1, 2) : 0; i > 0; i--)
    actions.push({
      kind: 'invalidate',
      atMs: rng.int(0, 900_000),
      roots: [rng.chance(0.05) ? 'no-such-step' : rng.pick(ids)],
      repeat: rng.chance(0.25),
    });
  if (rng.chance(0.15)) {
    const watched = rng.pick(ids);
    steps = steps.map((s) => (s.id === watched ? { ...s, watches: ['res:a'] } : s));
    actions.push({ kind: 'resource', atMs: rng.int(0, 900_000), resourceKey: 'res:a' });
  }
  if (rng.chance(0.1)) actions.push({ kind: 'invalidate-after-finish', roots: [rng.pick(ids)] });
  const plan: Plan = {
    schemaVersion: 1,
    revision: 1,
    objective: 'simulated',
    steps,
    ...(budgeted
      ? {
          budget: {
            maxTokens: rng.int(300, 3000),
            onExhausted: rng.chance(0.5) ? ('pause' as const) : ('fail' as const),
          },
        }
      : {}),
  };
  return { plan, profiles, actions, rejectPlan: rng.chance(0.02) };
}
