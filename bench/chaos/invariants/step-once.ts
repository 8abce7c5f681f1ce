/**
 * No step is lost or run twice.
 * - Lost: a finished run leaves no step open; a complete run has every step succeeded or skipped; a blocked step
 *   has an upstream step that did not release it (else nothing stopped it, and it never ran). Nor an attempt: a
 *   finished run has no attempt record left `running` (a gate's, recorded while it waits, is closed by every ending).
 * - Twice: within one generation, attempt numbers are distinct and within the step's retry policy, at most one
 *   attempt succeeded, and the audit log shows at most one StepStarted and one StepSucceeded.
 */
import {
  FINAL_RUN_STATUSES,
  generationKey,
  type InvariantCheck,
  OPEN_STEP_STATUSES,
  RELEASING_STEP_STATUSES,
  type RunObservation,
  type StepObservation,
  type Violation,
  violation,
} from './types.ts';

function lost(run: RunObservation): Violation[] {
  const found: Violation[] = [];
  const status = new Map(run.steps.map((s) => [s.id, s.status]));
  for (const step of run.steps) {
    if (FINAL_RUN_STATUSES.has(run.status) && OPEN_STEP_STATUSES.has(step.status))
      found.push(violation(run, 'step-once', `${step.id} lost: ${step.status} in a ${run.status} run`));
    if (run.status === 'complete' && !RELEASING_STEP_STATUSES.has(step.status))
      found.push(violation(run, 'step-once', `${step.id} is ${step.status} in a complete run`));
    if (step.status === 'blocked') {
      const upstream = step.dependsOn.map((id) => `${id}=${status.get(id) ?? 'absent'}`);
      const holding = step.dependsOn.filter((id) => !RELEASING_STEP_STATUSES.has(status.get(id) ?? 'absent'));
      if (holding.length === 0)
        found.push(
          violation(
            run,
            'step-once',
            `${step.id} blocked, but every upstream step released it: ${upstream.join(', ') || 'none'}`,
          ),
        );
    }
  }
  return found;
}

function attemptsLeftRunning(run: RunObservation, step: StepObservation): Violation[] {
  if (!FINAL_RUN_STATUSES.has(run.status)) return [];
  return step.attempts
    .filter((a) => a.outcome === 'running')
    .map((a) =>
      violation(
        run,
        'step-once',
        `${generationKey(step.id, a.generation)} attempt ${a.attempt} left running in a ${run.status} run`,
      ),
    );
}

function attemptsTwice(run: RunObservation, step: StepObservation): Violation[] {
  const found: Violation[] = [];
  const byGeneration = new Map<number, number[]>();
  const succeeded = new Map<number, number>();
  for (const attempt of step.attempts) {
    byGeneration.set(attempt.generation, [...(byGeneration.get(attempt.generation) ?? []), attempt.attempt]);
    if (attempt.outcome === 'succeeded')
      succeeded.set(attempt.generation, (succeeded.get(attempt.generation) ?? 0) + 1);
  }
  for (const [generation, numbers] of byGeneration) {
    const key = generationKey(step.id, generation);
    const distinct = new Set(numbers);
    if (distinct.size !== numbers.length)
      found.push(
        violation(
          run,
          'step-once',
          `${key} recorded attempt numbers twice: ${numbers.sort((a, b) => a - b).join(', ')}`,
        ),
      );
    if (step.maxAttempts !== undefined && distinct.size > step.maxAttempts)
      found.push(
        violation(run, 'step-once', `${key} took ${distinct.size} attempts; its policy allows ${step.maxAttempts}`),
      );
    const wins = succeeded.get(generation) ?? 0;
    if (wins > 1) found.push(violation(run, 'step-once', `${key} has ${wins} succeeded attempts`));
  }
  return found;
}

/** StepStarted is announced by the claim and StepSucceeded by the completion: once each per generation. */
function announcedTwice(run: RunObservation): Violation[] {
  const counts = new Map<string, number>();
  for (const event of run.events) {
    if ((event.type !== 'StepStarted' && event.type !== 'StepSucceeded') || event.stepId === undefined) continue;
    const key = `${event.type} ${generationKey(event.stepId, event.generation ?? 0)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts]
    .filter(([, n]) => n > 1)
    .map(([key, n]) => violation(run, 'step-once', `${key} announced ${n} times`));
}

export const checkStepOnce: InvariantCheck = (run) => [
  ...lost(run),
  ...run.steps.flatMap((step) => attemptsTwice(run, step)),
  ...run.steps.flatMap((step) => attemptsLeftRunning(run, step)),
  ...announcedTwice(run),
];
