/**
 * Hostile plan expressions through the embedded stack (the real state machines, handlers and store): expressions
 * the validator cannot see through (recursion by self-application, an overlapping alternation, a $pad) run in the
 * sandbox's worker processes, fail their steps with E_EXPRESSION_LIMIT, never retried, and the run ends truthfully,
 * while the API keeps answering and an independent step of the same run succeeds. Expressions that could read an
 * output they do not name are refused before anything runs (E_DYNAMIC_REFERENCE).
 */
import { describe, expect, it } from 'vitest';
import { useEngineStack } from '../support/engine-stack.ts';

const engine = useEngineStack();

/** Recursion the validator cannot name: `$y` calls its argument on itself, forever (a tail call). */
const SELF_APPLICATION = '{% ($y := function($f){ $f($f) }; $y($y)) %}';
/** An alternation whose branches overlap, under a star: exponential backtracking on a string that does not match. */
const BACKTRACKING = `{% $contains("${'a'.repeat(32)}!", /^(a|a)*$/) %}`;

describe('expressions in the sandbox', () => {
  it('fails each step whose input, when or assertion hits a bound with E_EXPRESSION_LIMIT, and ends the run', async () => {
    const { step, submit, quiet, outcome, pack, stack } = engine();
    const runId = await submit([
      step('looping', [], { input: { value: SELF_APPLICATION } }),
      step('backtracking', [], { when: BACKTRACKING }),
      step('padding', [], { successCriteria: { description: 'huge', assert: '{% $pad("", 100000000, "x") = "" %}' } }),
      step('healthy', [], { input: { n: '{% 1 + 1 %}' } }),
      step('after', ['looping']),
    ]);
    // The engine's process answers while its workers spin.
    const health = await fetch(`${stack.url}/health`);
    expect(health.status).toBe(200);
    await quiet();
    const { run, steps } = await outcome(runId);
    for (const id of ['looping', 'backtracking', 'padding'])
      expect(steps.get(id), id).toMatchObject({
        status: 'failed',
        attempts: id === 'padding' ? 1 : 0,
        error: { code: 'E_EXPRESSION_LIMIT', retryable: false },
      });
    // The claim failed before any attempt: the capability was never called for the input and the condition.
    expect(pack.calls(runId, 'looping')).toHaveLength(0);
    expect(pack.calls(runId, 'backtracking')).toHaveLength(0);
    expect(pack.calls(runId, 'padding')).toHaveLength(1);
    expect(steps.get('healthy')).toMatchObject({ status: 'succeeded', output: { n: 2 } });
    expect(steps.get('after')?.status).toBe('blocked');
    expect(run.status).toBe('failed');
    const rootCauses = (run.terminal?.evidence.rootCauses ?? []) as string[];
    expect([...rootCauses].sort()).toEqual(['backtracking', 'looping', 'padding']);
  });

  it('refuses at POST /plans/validate and POST /runs a plan whose expressions read outputs they do not name', async () => {
    const { step, stack } = engine();
    // c depends on a only; each expression would read b all the same.
    const plan = {
      schemaVersion: 1,
      revision: 1,
      objective: 'reads b without naming it',
      steps: [
        step('a', []),
        step('b', []),
        step('c', ['a'], {
          input: {
            parent: '{% $outputs.a.%.b %}',
            focus: '{% $outputs.a@$v.b %}',
            evaluated: '{% $eval("$outputs.b") %}',
            dynamic: '{% $lookup($outputs, "b") %}',
          },
        }),
      ],
    };
    const refused = [
      'E_DYNAMIC_REFERENCE /steps/2/input/parent',
      'E_DYNAMIC_REFERENCE /steps/2/input/focus',
      'E_DYNAMIC_REFERENCE /steps/2/input/evaluated',
      'E_DYNAMIC_REFERENCE /steps/2/input/dynamic',
    ];
    for (const path of ['/plans/validate', '/runs']) {
      const { status, json } = await stack.request('POST', path, { plan });
      expect(status, path).toBe(422);
      const errors = (json as { errors: { code: string; path: string }[] }).errors;
      expect(errors.map((e) => `${e.code} ${e.path}`).sort(), path).toEqual([...refused].sort());
    }
  });
});
