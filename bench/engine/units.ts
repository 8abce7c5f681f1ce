/**
 * What one succeeded tool step costs in AWS units, apart from what its run costs: echo chains of 1, 2 and 3 steps,
 * each run alone (the stack settled before and after, so nothing else is counted).
 */
import { chain, echoSteps } from './dags.ts';
import type { Workload } from './drive.ts';
import type { Units } from './report.ts';

type Counted = Pick<
  Units,
  | 'stateTransitions'
  | 'lambda'
  | 'writes'
  | 'auditWrites'
  | 'reads'
  | 'readItems'
  | 'readBytes'
  | 'planReads'
  | 'sends'
  | 'batches'
> & {
  lambdaBy: Record<string, number>;
};

const minus = (a: Counted | Units, b: Counted | Units): Counted => {
  const lambdaBy: Record<string, number> = {};
  for (const name of new Set([...Object.keys(a.lambdaBy), ...Object.keys(b.lambdaBy)])) {
    const d = (a.lambdaBy[name] ?? 0) - (b.lambdaBy[name] ?? 0);
    if (d !== 0) lambdaBy[name] = d;
  }
  return {
    stateTransitions: a.stateTransitions - b.stateTransitions,
    lambda: a.lambda - b.lambda,
    lambdaBy,
    writes: a.writes - b.writes,
    auditWrites: a.auditWrites - b.auditWrites,
    reads: a.reads - b.reads,
    readItems: a.readItems - b.readItems,
    readBytes: a.readBytes - b.readBytes,
    planReads: a.planReads - b.planReads,
    sends: a.sends - b.sends,
    batches: a.batches - b.batches,
  };
};

const describe = (u: Counted | Units): string =>
  `${u.stateTransitions} st, ${u.lambda} λ ${JSON.stringify(u.lambdaBy)}, ${u.writes} w (+${u.auditWrites} audit-log batch), ${u.reads} r (${u.readItems} items, ${u.readBytes} B, ${u.planReads} plan), ${u.sends} sent in ${u.batches} batches`;

/**
 * The budgets of one step (issues 23 and 24): ≤ 3 state transitions, 1 Lambda invocation, ≤ 4 writes, ≤ 1 read
 * request of ≤ 4 KB, no plan read, and on the ordered channel (the run's mailbox) ≤ 1 send, received in batches.
 */
const UNIT_TARGETS = [
  ['stateTransitions', 'state transitions / step', 3, 'units'],
  ['lambda', 'Lambda invocations / step', 1, 'units'],
  ['writes', 'DynamoDB writes / step', 4, 'units'],
  ['reads', 'DynamoDB read requests / step', 1, 'units'],
  ['readBytes', 'DynamoDB bytes read / step', 4096, 'bytes'],
  ['sends', 'mailbox sends / step', 1, 'units'],
] as const;

/**
 * What one succeeded tool step with one dependent costs: echo chains of 1, 2 and 3 steps, each run alone (the
 * stack settled before and after), 3 times. The step's cost is the difference 2-step run − 1-step run (the same run
 * overhead cancels; what is left is one more step and one more edge); 3-step − 2-step shows it is stable. The worst
 * of the repetitions is judged.
 */
export const stepUnits: Workload = {
  name: 'step-units',
  async run(ctx) {
    const reps = 3;
    const totals: Units[][] = [];
    for (let r = 0; r < reps; r++) {
      const row: Units[] = [];
      for (const n of [1, 2, 3]) {
        const result = await ctx.driver.run(echoSteps(ctx.stack, chain(n, 'u')), `bench step-units: ${n}-step chain`);
        if (result.status !== 'complete') throw new Error(`step-units: the ${n}-step chain ended ${result.status}`);
        row.push(result.units);
      }
      totals.push(row);
    }
    const at = (r: number, i: number): Units => {
      const u = totals[r]?.[i];
      if (!u) throw new Error('step-units: missing a measure');
      return u;
    };
    const marginal = totals.map((_, r) => minus(at(r, 1), at(r, 0)));
    const next = totals.map((_, r) => minus(at(r, 2), at(r, 1)));
    const first = marginal[0] ?? minus(at(0, 1), at(0, 0));
    const stable =
      marginal.every((m) => describe(m) === describe(first)) && next.every((m) => describe(m) === describe(first));
    const worst = (key: (typeof UNIT_TARGETS)[number][0]) => Math.max(...marginal.map((m) => m[key]));
    // A warm process keeps a plan it read, so the marginal step hides a plan read: every run's plan reads, per step,
    // say what cold containers (one per step, at worst) would read.
    const planReadsPerStep = Math.max(...totals.flatMap((row) => row.map((u, i) => u.planReads / (i + 1))));
    // Batches form as commands wait, so a difference of two runs' batches says nothing: whole runs say how many
    // commands a receive carries (deployed, a decider invocation takes up to 10).
    const perBatch = Math.min(...totals.flat().map((u) => (u.batches === 0 ? 0 : u.sends / u.batches)));
    console.log(
      `step-units: echo chains run alone ×${reps}; one step with one dependent (2-step run − 1-step run): ${describe(first)}; ` +
        `3-step − 2-step: ${describe(next[0] ?? first)}${stable ? '' : ' (varied across repetitions: worst judged)'} ` +
        '(targets ≤ 3 st, 1 λ, 4 w, 1 r of ≤ 4096 B, 0 plan, ≤ 1 send)',
    );
    console.log(
      `  whole runs (run overhead included): 1 step ${describe(at(0, 0))}; 2 steps ${describe(at(0, 1))}; ` +
        `3 steps ${describe(at(0, 2))}; run overhead (1-step run − one step) ${describe(minus(at(0, 0), first))}`,
    );
    return [
      ...UNIT_TARGETS.map(([key, metric, target, unit]) => ({
        workload: 'step-units',
        metric,
        value: worst(key),
        unit,
        target: { op: '≤' as const, value: target },
      })),
      {
        workload: 'step-units',
        metric: 'mailbox commands / batch (whole runs)',
        value: perBatch,
        unit: 'ratio',
        target: { op: '≥' as const, value: 1 },
      },
      {
        workload: 'step-units',
        metric: 'plan reads / step (whole runs)',
        value: planReadsPerStep,
        unit: 'units',
        target: { op: '≤' as const, value: 0 },
      },
    ];
  },
};
