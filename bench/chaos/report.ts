/** The suite's closing report: counts, then each violation with its run, then how to re-run the failing runs. */
import type { ChaosOptions, ChaosResult } from './runner.ts';

const tally = (values: readonly string[]): string => {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return (
    [...counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none'
  );
};

const counted = (counts: Readonly<Record<string, number>>): string =>
  Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ') || 'none';

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
};

const quotasLowered = (quotas: ChaosOptions['awsQuotas']): string => {
  if (quotas === undefined || quotas === false) return '';
  const lowered = [
    ...(quotas.lambdaConcurrency === undefined ? [] : [`Lambda concurrency ${quotas.lambdaConcurrency}`]),
    ...(quotas.sfnStartRate === undefined ? [] : [`StartExecution ${quotas.sfnStartRate}/s`]),
  ];
  return lowered.length === 0 ? " (AWS's numbers)" : ` (${lowered.join(', ')})`;
};

export function formatReport(options: Omit<ChaosOptions, 'log'>, result: ChaosResult): string[] {
  const { runs, violations } = result;
  const steps = runs.flatMap((r) => r.steps);
  const ended = runs.map((r) => r.endedAfterMs).filter((ms): ms is number => ms !== null);
  const faults = result.faultsInjected;
  const lines = [
    `chaos: seed ${options.seed}, faults ${options.faults === '' ? 'none' : options.faults}`,
    `runs: ${runs.length} checked${result.errors.length > 0 ? `, ${result.errors.length} not driven or read` : ''}`,
    `run states: ${tally(runs.map((r) => (r.endedAfterMs === null ? `${r.status} (not ended)` : r.status)))}`,
    `steps: ${steps.length} (${tally(steps.map((s) => s.status))})`,
    `attempts: ${steps.reduce((n, s) => n + s.attempts.length, 0)}; ledger entries: ${runs.reduce((n, r) => n + r.ledger.length, 0)}; events: ${runs.reduce((n, r) => n + r.events.length, 0)}`,
    `actions: ${result.actions.cancels} cancels, ${result.actions.invalidations} invalidations (${result.actions.invalidationsRefused} refused), ${result.actions.webhooks} webhook deliveries, ${result.actions.actionsFailed} failed; approvals: ${result.approvals.approved} approved, ${result.approvals.rejected} rejected, ${result.approvals.refused} refused, ${result.approvals.failed} failed`,
    `faults injected: ${faults === undefined ? 'not reported by this build' : tally(Object.entries(faults).flatMap(([k, n]) => Array<string>(n).fill(k)))}`,
    // What the counts above are out of: a point's faults fire on its calls only (bus.deliver: an event a rule
    // delivers to its target, which most events are not).
    ...(result.faultCalls === undefined ? [] : [`calls per fault point: ${counted(result.faultCalls)}`]),
    `AWS quotas: ${options.awsQuotas === false ? 'off' : `on${quotasLowered(options.awsQuotas)}`}; throttles absorbed: ${result.throttles === undefined ? 'not reported' : counted(result.throttles)}`,
    `time: ${(result.wallMs / 1000).toFixed(1)} s in all; a run ended after ${median(ended)} ms (median), ${ended.length > 0 ? Math.max(...ended) : Number.NaN} ms (max)${result.settled ? '' : '; the stack did not go quiet within the bound'}`,
    `violations: ${violations.length}${violations.length > 0 ? ` (${tally(violations.map((v) => v.invariant))})` : ''}`,
  ];
  for (const v of violations) lines.push(`  [${v.invariant}] ${v.label} (run ${v.runId}): ${v.detail}`);
  for (const e of result.errors) lines.push(`  [error] ${e.label}: ${e.message}`);
  const failing = [...new Set([...violations, ...result.errors].map((v) => Number(v.label.split(' ').at(-1))))];
  if (failing.length > 0)
    lines.push(
      `re-run: npm run chaos -- --seed ${options.seed} --only ${failing.sort((a, b) => a - b).join(',')} --runs 1${options.faults === '' ? '' : ` --faults '${options.faults}'`}`,
    );
  return lines;
}
