import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodePlan, encodePlan } from '../../../shared/plan/codec.ts';
import { planSchema } from '../../../shared/plan/schema.ts';
import { arbitraryPlan, plan, readFixture, step } from './plan-testkit.ts';

const errorsOf = (text: string) => {
  const result = decodePlan(text);
  if (result.ok) throw new Error('expected the plan to be rejected');
  return result.errors;
};

describe('decodePlan', () => {
  it('decodes a fixture plan to the same value JSON.parse gives', () => {
    const text = readFixture('plans/good/groups.json');
    expect(decodePlan(text)).toEqual({ ok: true, plan: JSON.parse(text) });
  });

  it('rejects malformed JSON, duplicate keys and trailing data with E_JSON', () => {
    const text = JSON.stringify(plan([step('a')]));
    expect(errorsOf(text.slice(0, -1))[0]?.code).toBe('E_JSON');
    expect(errorsOf(`${text} []`)[0]?.code).toBe('E_JSON');
    const duplicated = text.replace('"title":', '"title": "one", "title":');
    expect(errorsOf(duplicated)).toEqual([
      { code: 'E_JSON', path: '/steps/0/title', message: expect.stringMatching(/^duplicate key "title" at line 1/) },
    ]);
  });

  it('rejects a missing or unknown schemaVersion with E_SCHEMA_VERSION', () => {
    const { schemaVersion: _, ...unversioned } = plan([step('a')]);
    expect(errorsOf(JSON.stringify(unversioned)).map((e) => e.code)).toEqual(['E_SCHEMA_VERSION']);
    expect(errorsOf(JSON.stringify({ ...plan([step('a')]), schemaVersion: 3 }))).toEqual([
      { code: 'E_SCHEMA_VERSION', path: '/schemaVersion', message: 'unsupported schemaVersion 3 (expected 1)' },
    ]);
  });

  it('rejects missing and extra fields with E_FIELD and JSON Pointer paths', () => {
    const { dependsOn: _, ...noDeps } = step('a');
    const text = JSON.stringify({ ...plan([step('ok'), { ...noDeps, 'odd/key': 1 } as never]), more: 1 });
    expect(errorsOf(text).map((e) => `${e.code} ${e.path}`)).toEqual([
      'E_FIELD /more',
      'E_FIELD /steps/1/dependsOn',
      'E_FIELD /steps/1/odd~1key',
    ]);
  });

  it('checks the format only, not the graph or the catalog', () => {
    expect(decodePlan(JSON.stringify(plan([step('a', ['ghost'], { target: 'tool:nope' })]))).ok).toBe(true);
  });

  it('never throws, whatever the text', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.jsonValue().map((v) => JSON.stringify({ ...plan([]), steps: [v] })),
        ),
        (text) => {
          const result = decodePlan(text);
          if (!result.ok) expect(result.errors.length).toBeGreaterThan(0);
        },
      ),
    );
  });
});

describe('encodePlan', () => {
  it('round-trips every valid plan: decode(encode(p)) equals p', () => {
    fc.assert(
      fc.property(arbitraryPlan, (p) => {
        const decoded = decodePlan(encodePlan(p));
        expect(decoded).toEqual({ ok: true, plan: p });
      }),
      { numRuns: 200 },
    );
  });

  it('writes the fields in schema order, as pretty JSON with a final newline', () => {
    const p = {
      steps: [{ dependsOn: [], target: 'tool:fetch', title: 't', id: 'a' }],
      objective: 'o',
      revision: 2,
      schemaVersion: 1,
    };
    const text = encodePlan(planSchema.parse(p));
    expect(Object.keys(JSON.parse(text))).toEqual(['schemaVersion', 'revision', 'objective', 'steps']);
    expect(Object.keys(JSON.parse(text).steps[0])).toEqual(['id', 'title', 'target', 'dependsOn']);
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n  "revision": 2,');
  });
});
