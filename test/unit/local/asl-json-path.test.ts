import { createRequire } from 'node:module';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { JSONPath } from 'jsonpath-plus';
import { describe, expect, it } from 'vitest';
import { evaluatePlainJsonPaths } from '../../../infra/local/asl-json-path.ts';

// The CommonJS build is a copy of its own, which the fast path leaves as it is: the reference.
const reference = (createRequire(import.meta.url)('jsonpath-plus') as { JSONPath: typeof JSONPath }).JSONPath;
evaluatePlainJsonPaths();

const document = {
  runId: 'r-1',
  zero: 0,
  no: false,
  nothing: null,
  empty: '',
  text: 'abc',
  list: [1, { a: 'x' }],
  nested: { a: { b: 'deep' } },
};

describe('evaluatePlainJsonPaths', () => {
  const paths = [
    '$',
    '$.runId',
    '$.zero',
    '$.no',
    '$.nothing',
    '$.empty',
    '$.text',
    '$.text.length',
    '$.list',
    '$.list.length',
    '$.nested',
    '$.nested.a.b',
    '$.missing',
    '$.missing.deeper',
    '$.nested.constructor',
    '$.runId.toString',
    // Not plain: evaluated by jsonpath-plus itself.
    '$.list[1].a',
    '$..b',
    "$['runId']",
  ];

  it.each(paths)('answers %s as jsonpath-plus does, called as aws-local-stepfunctions calls it', (path) => {
    const call = (jp: typeof JSONPath, json: object | number | null) => jp({ path, json, wrap: false });
    expect(call(JSONPath, document)).toEqual(call(reference, document));
    expect(call(JSONPath, null)).toEqual(call(reference, null));
    expect(call(JSONPath, 0)).toEqual(call(reference, 0));
  });

  it('answers an object path with the document’s own object, as jsonpath-plus does', () => {
    expect(JSONPath({ path: '$.nested.a', json: document, wrap: false })).toBe(document.nested.a);
  });

  it('evaluates a plain path without jsonpath-plus’s tracer, and any other path with it', () => {
    const prototype = JSONPath.prototype as unknown as { _trace: (...args: unknown[]) => unknown };
    const trace = prototype._trace;
    let traced = 0;
    prototype._trace = function (this: unknown, ...args: unknown[]) {
      traced++;
      return trace.apply(this, args);
    };
    try {
      expect(JSONPath({ path: '$.nested.a.b', json: document, wrap: false })).toBe('deep');
      expect(traced).toBe(0);
      expect(JSONPath({ path: '$.list[1].a', json: document, wrap: false })).toBe('x');
      expect(traced).toBeGreaterThan(0);
    } finally {
      prototype._trace = trace;
    }
  });

  it('leaves other options and ways of calling to jsonpath-plus', () => {
    expect(JSONPath({ path: '$.runId', json: document })).toEqual(['r-1']);
    expect(JSONPath({ path: '$.nested.a.b', json: document, resultType: 'path', wrap: false })).toBe(
      "$['nested']['a']['b']",
    );
    expect(JSONPath({ path: '$.runId', json: document, wrap: true })).toEqual(['r-1']);
  });

  it('gives a state machine the values its paths name, and the error for a path that names none', async () => {
    const machine = new StateMachine({
      StartAt: 'Pick',
      States: {
        Pick: {
          Type: 'Pass',
          Parameters: { 'runId.$': '$.runId', 'zero.$': '$.zero', 'deep.$': '$.nested.a.b', 'list.$': '$.list' },
          End: true,
        },
      },
    } as unknown as StateMachineDefinition);
    await expect(machine.run(document).result).resolves.toEqual({
      runId: 'r-1',
      zero: 0,
      deep: 'deep',
      list: document.list,
    });
    const missing = new StateMachine({
      StartAt: 'Pick',
      States: { Pick: { Type: 'Pass', Parameters: { 'x.$': '$.missing' }, End: true } },
    } as unknown as StateMachineDefinition);
    await expect(missing.run(document).result).rejects.toThrow(/does not point to a value/);
  });
});
