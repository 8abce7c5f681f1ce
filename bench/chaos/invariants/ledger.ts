/**
 * Side effects happen once: each generation of a mutating step appears at most once in the conformance ledger,
 * and exactly once if it succeeded (an attempt of that generation succeeded, or the step succeeded in it). A
 * ledger entry of a step that is not a mutating step of the plan is reported too: nobody should have written it.
 */
import { generationKey, type InvariantCheck, type Violation, violation } from './types.ts';

export const checkLedgerOnce: InvariantCheck = (run) => {
  const found: Violation[] = [];
  const entries = new Map<string, string[]>();
  for (const entry of run.ledger) {
    const key = generationKey(entry.stepId, entry.generation);
    entries.set(key, [...(entries.get(key) ?? []), `${entry.entryId} (attempt ${entry.attempt})`]);
  }
  const mutating = new Set(run.steps.filter((s) => s.mutating).map((s) => s.id));
  for (const [key, ids] of entries) {
    const stepId = key.slice(0, key.lastIndexOf('#'));
    if (!mutating.has(stepId))
      found.push(
        violation(run, 'ledger-once', `${key} is not a mutating step of the plan but wrote ${ids.join(', ')}`),
      );
    if (ids.length > 1)
      found.push(violation(run, 'ledger-once', `${key} wrote ${ids.length} ledger entries: ${ids.join(', ')}`));
  }
  for (const step of run.steps.filter((s) => s.mutating)) {
    const succeeded = new Set(step.attempts.filter((a) => a.outcome === 'succeeded').map((a) => a.generation));
    if (step.status === 'succeeded' && step.generation !== null) succeeded.add(step.generation);
    for (const generation of succeeded) {
      const key = generationKey(step.id, generation);
      if (!entries.has(key)) found.push(violation(run, 'ledger-once', `${key} succeeded but left no ledger entry`));
    }
  }
  return found;
};
