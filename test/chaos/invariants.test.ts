/**
 * The chaos suite's invariant checkers on hand-made runs: a sound run passes every one, and each breach of an
 * invariant is reported by its checker (so a chaos run with 0 violations means something).
 */
import { describe, expect, it } from 'vitest';
import { checkAfterFinish } from '../../bench/chaos/invariants/after-finish.ts';
import { checkDownstream } from '../../bench/chaos/invariants/downstream.ts';
import { checkRun } from '../../bench/chaos/invariants/index.ts';
import { checkLedgerOnce } from '../../bench/chaos/invariants/ledger.ts';
import { checkStepOnce } from '../../bench/chaos/invariants/step-once.ts';
import { checkTerminal } from '../../bench/chaos/invariants/terminal.ts';
import type { EventObservation, RunObservation, StepObservation } from '../../bench/chaos/invariants/types.ts';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, ms)).toISOString();

const event = (type: string, ms: number, fields: Partial<EventObservation> = {}): EventObservation => ({
  seq: `${at(ms)}~${type}~0`,
  type,
  at: at(ms),
  detail: {},
  ...fields,
});

const step = (id: string, fields: Partial<StepObservation> = {}): StepObservation => ({
  id,
  target: 'tool:conformance.echo',
  dependsOn: [],
  status: 'succeeded',
  generation: 1,
  attempts: [{ generation: 1, attempt: 1, outcome: 'succeeded' }],
  mutating: false,
  maxAttempts: 4,
  ...fields,
});

/** a → w (ledger) → c, all succeeded; the log and the ledger agree. */
function soundRun(fields: Partial<RunObservation> = {}): RunObservation {
  return {
    runId: 'run-1',
    label: 'seed 1 run 0',
    status: 'complete',
    terminal: { state: 'complete', reason: 'completed' },
    endedAfterMs: 120,
    boundMs: 30_000,
    steps: [
      step('a'),
      step('w', { target: 'tool:conformance.ledger', mutating: true, dependsOn: ['a'] }),
      step('c', { dependsOn: ['w'] }),
    ],
    events: [
      event('RunStarted', 0),
      event('StepStarted', 1, { stepId: 'a', generation: 1 }),
      event('StepSucceeded', 2, { stepId: 'a', generation: 1 }),
      event('StepStarted', 3, { stepId: 'w', generation: 1 }),
      event('StepSucceeded', 4, { stepId: 'w', generation: 1 }),
      event('StepStarted', 5, { stepId: 'c', generation: 1 }),
      event('StepSucceeded', 6, { stepId: 'c', generation: 1 }),
      event('RunFinished', 7, { detail: { state: 'complete' } }),
    ],
    ledger: [{ entryId: 'ledger-000001', stepId: 'w', generation: 1, attempt: 1, at: at(4) }],
    ...fields,
  };
}

const withStep = (run: RunObservation, id: string, fields: Partial<StepObservation>): RunObservation => ({
  ...run,
  steps: run.steps.map((s) => (s.id === id ? { ...s, ...fields } : s)),
});

describe('checkRun', () => {
  it('reports nothing on a sound run', () => {
    expect(checkRun(soundRun())).toEqual([]);
  });
});

describe('checkTerminal', () => {
  it('reports a run that did not end within the bound', () => {
    const run = soundRun({ status: 'running', endedAfterMs: null });
    delete (run as { terminal?: unknown }).terminal;

    const found = checkTerminal(withStep(run, 'c', { status: 'running' }));

    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ invariant: 'terminal', runId: 'run-1' });
    expect(found[0]?.detail).toContain('c=running');
  });

  it('says a run is stuck when the stack went quiet with it open', () => {
    const found = checkTerminal(soundRun({ status: 'running', endedAfterMs: null, terminal: undefined, quiet: true }));

    expect(found[0]?.detail).toContain('stuck: the stack went quiet with the run open');
  });

  it('says a run that ended only after the bound was slow, not stuck', () => {
    const found = checkTerminal(soundRun({ status: 'failed', endedAfterMs: null, quiet: true, terminal: undefined }));

    expect(found[0]?.detail).toContain('slow, not stuck');
    expect(found[0]?.detail).not.toContain('stuck: the stack went quiet');
  });

  it('reports a paused run without the engine reason', () => {
    const found = checkTerminal(soundRun({ status: 'paused', terminal: undefined }));

    expect(found.map((v) => v.invariant)).toEqual(['terminal']);
  });

  it('accepts a paused run with the engine reason', () => {
    expect(checkTerminal(soundRun({ status: 'paused', terminal: { state: 'paused', reason: 'no_progress' } }))).toEqual(
      [],
    );
  });

  it('reports a status its terminal record does not hold', () => {
    const found = checkTerminal(soundRun({ status: 'failed' }));

    expect(found.map((v) => v.detail)).toEqual(['status failed but terminal record complete']);
  });
});

describe('checkLedgerOnce', () => {
  it('reports a generation that wrote the ledger twice', () => {
    const run = soundRun();
    const found = checkLedgerOnce({
      ...run,
      ledger: [...run.ledger, { entryId: 'ledger-000002', stepId: 'w', generation: 1, attempt: 2, at: at(5) }],
    });

    expect(found).toHaveLength(1);
    expect(found[0]?.detail).toContain('w#1 wrote 2 ledger entries');
  });

  it('reports a succeeded generation that left no entry', () => {
    const found = checkLedgerOnce(soundRun({ ledger: [] }));

    expect(found.map((v) => v.detail)).toEqual(['w#1 succeeded but left no ledger entry']);
  });

  it('reports a succeeded attempt of an earlier generation that left no entry', () => {
    const run = withStep(soundRun(), 'w', {
      generation: 2,
      attempts: [
        { generation: 1, attempt: 1, outcome: 'succeeded' },
        { generation: 2, attempt: 1, outcome: 'succeeded' },
      ],
    });
    const found = checkLedgerOnce({ ...run, ledger: [{ ...soundRun().ledger[0], generation: 2 } as never] });

    expect(found.map((v) => v.detail)).toEqual(['w#1 succeeded but left no ledger entry']);
  });

  it('reports an entry of a step that is not mutating', () => {
    const found = checkLedgerOnce({
      ...soundRun(),
      ledger: [...soundRun().ledger, { entryId: 'ledger-000009', stepId: 'a', generation: 1, attempt: 1, at: at(2) }],
    });

    expect(found.map((v) => v.detail)).toEqual([
      'a#1 is not a mutating step of the plan but wrote ledger-000009 (attempt 1)',
    ]);
  });

  it('accepts a failed generation that made no entry', () => {
    const run = withStep(soundRun({ ledger: [] }), 'w', {
      status: 'failed',
      attempts: [{ generation: 1, attempt: 1, outcome: 'failed' }],
    });

    expect(checkLedgerOnce(run)).toEqual([]);
  });
});

describe('checkStepOnce', () => {
  it('reports a step left open in a finished run', () => {
    const run = withStep(soundRun({ status: 'failed', terminal: { state: 'failed', reason: 'step_failed' } }), 'c', {
      status: 'pending',
      attempts: [],
    });

    expect(checkStepOnce(run).map((v) => v.detail)).toEqual(['c lost: pending in a failed run']);
  });

  it('reports a complete run with a blocked step and a block nothing caused', () => {
    const found = checkStepOnce(withStep(soundRun(), 'c', { status: 'blocked', attempts: [] }));

    expect(found.map((v) => v.detail)).toEqual([
      'c is blocked in a complete run',
      'c blocked, but every upstream step released it: w=succeeded',
    ]);
  });

  it('reports the same attempt recorded twice and two succeeded attempts', () => {
    const found = checkStepOnce(
      withStep(soundRun(), 'a', {
        attempts: [
          { generation: 1, attempt: 1, outcome: 'succeeded' },
          { generation: 1, attempt: 1, outcome: 'succeeded' },
        ],
      }),
    );

    expect(found.map((v) => v.detail)).toEqual([
      'a#1 recorded attempt numbers twice: 1, 1',
      'a#1 has 2 succeeded attempts',
    ]);
  });

  it('reports an attempt left running in a finished run', () => {
    const run = withStep(soundRun({ status: 'failed', terminal: { state: 'failed', reason: 'step_failed' } }), 'c', {
      target: 'human:conformance.approver',
      status: 'failed',
      attempts: [{ generation: 1, attempt: 1, outcome: 'running' }],
    });

    expect(checkStepOnce(run).map((v) => v.detail)).toEqual(['c#1 attempt 1 left running in a failed run']);
  });

  it('accepts an attempt running while the run is still open', () => {
    const run = withStep(soundRun({ status: 'running', terminal: undefined }), 'c', {
      status: 'awaiting_approval',
      attempts: [{ generation: 1, attempt: 1, outcome: 'running' }],
    });

    expect(checkStepOnce(run)).toEqual([]);
  });

  it('reports more attempts than the retry policy allows', () => {
    const attempts = [1, 2, 3].map((attempt) => ({ generation: 1, attempt, outcome: 'failed' }));

    const found = checkStepOnce(withStep(soundRun(), 'a', { attempts, maxAttempts: 2 }));

    expect(found.map((v) => v.detail)).toEqual(['a#1 took 3 attempts; its policy allows 2']);
  });

  it('reports a step announced as succeeded twice in one generation', () => {
    const run = soundRun();
    const found = checkStepOnce({
      ...run,
      events: [...run.events, event('StepSucceeded', 6, { stepId: 'c', generation: 1 })],
    });

    expect(found.map((v) => v.detail)).toEqual(['StepSucceeded c#1 announced 2 times']);
  });

  it('accepts a new generation of the same step (an invalidation)', () => {
    const run = soundRun();
    const found = checkStepOnce({
      ...run,
      events: [...run.events, event('StepStarted', 9, { stepId: 'c', generation: 2 })],
    });

    expect(found).toEqual([]);
  });
});

describe('checkDownstream', () => {
  it('reports a step that succeeded downstream of a failed one', () => {
    const run = withStep(soundRun({ status: 'failed' }), 'a', { status: 'failed' });

    const found = checkDownstream(run);

    expect(found.map((v) => v.detail)).toEqual([
      'w succeeded downstream of a=failed',
      'c succeeded downstream of a=failed',
    ]);
  });

  it('reports a step that succeeded while its upstream never released it', () => {
    const found = checkDownstream(withStep(soundRun(), 'w', { status: 'cancelled' }));

    expect(found.map((v) => v.detail)).toEqual(['c succeeded though its upstream w=cancelled never released it']);
  });

  it('accepts success downstream of a skipped step', () => {
    expect(checkDownstream(withStep(soundRun(), 'w', { status: 'skipped', attempts: [] }))).toEqual([]);
  });
});

describe('checkAfterFinish', () => {
  it('reports a step event after RunFinished', () => {
    const run = soundRun();
    const found = checkAfterFinish({
      ...run,
      events: [...run.events, event('StepStarted', 40, { stepId: 'c', generation: 1 })],
    });

    expect(found).toHaveLength(1);
    expect(found[0]?.detail).toContain('1 event(s) after RunFinished(complete)');
    expect(found[0]?.detail).toContain('StepStarted c#1');
  });

  it('accepts the events of a reopened run up to its next RunFinished', () => {
    const run = soundRun();
    const found = checkAfterFinish({
      ...run,
      events: [
        ...run.events,
        event('RunReopened', 10),
        event('StepsInvalidated', 11),
        event('StepStarted', 12, { stepId: 'c', generation: 2 }),
        event('RunFinished', 13, { detail: { state: 'complete' } }),
      ],
    });

    expect(found).toEqual([]);
  });

  it('reports a second RunFinished without a reopen between', () => {
    const run = soundRun();
    const found = checkAfterFinish({
      ...run,
      events: [...run.events, event('RunFinished', 30, { detail: { state: 'cancelled' } })],
    });

    expect(found.map((v) => v.invariant)).toEqual(['after-finish']);
  });

  it('reports a cancelled run that reopened', () => {
    const run = soundRun();
    const events = [
      ...run.events.slice(0, -1),
      event('RunFinished', 7, { detail: { state: 'cancelled' } }),
      event('RunReopened', 9),
    ];

    expect(checkAfterFinish({ ...run, events }).map((v) => v.detail)).toEqual([
      `RunReopened after RunFinished(cancelled) at ${at(7)}`,
    ]);
  });

  it('does not order events written in the same millisecond as RunFinished', () => {
    const run = soundRun();
    const found = checkAfterFinish({
      ...run,
      events: [...run.events, event('StepSucceeded', 7, { stepId: 'c', generation: 1, seq: 'zzz' })],
    });

    expect(found).toEqual([]);
  });
});
