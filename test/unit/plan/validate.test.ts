import { describe, expect, it } from 'vitest';
import { ISSUE_CODES } from '../../../shared/plan/issues.ts';
import type { PlanStep } from '../../../shared/plan/schema.ts';
import { DEFAULT_LIMITS, validate, validateGenerated, validateText } from '../../../shared/plan/validate.ts';
import { catalog, codes, group, plan, step, where } from './plan-testkit.ts';

const check = (steps: PlanStep[], limits = {}) => validate(plan(steps), catalog, limits);

describe('validate: a valid plan', () => {
  it('returns the plan and no errors', () => {
    const p = plan([step('search', [], { target: 'tool:search' }), step('fetch', ['search'])]);
    expect(validate(p, catalog)).toEqual({ valid: true, plan: p, errors: [] });
  });

  it('uses the default limits of 64 steps and depth 16', () => {
    expect(DEFAULT_LIMITS).toEqual({ maxSteps: 64, maxDepth: 16 });
  });
});

describe('validate: E_SCHEMA_VERSION', () => {
  it('rejects an unknown version and checks nothing else', () => {
    const result = validate({ ...plan([]), schemaVersion: 2 }, catalog);
    expect(where(result)).toEqual(['E_SCHEMA_VERSION /schemaVersion']);
    expect(codes(validate({ ...plan([step('a')]), schemaVersion: '1' }, catalog))).toEqual(['E_SCHEMA_VERSION']);
  });

  it('reports a missing version and still reads the rest as v1', () => {
    const { schemaVersion: _, ...rest } = plan([step('a', ['ghost'])]);
    expect(where(validate(rest, catalog))).toEqual([
      'E_SCHEMA_VERSION /schemaVersion',
      'E_UNKNOWN_DEPENDENCY /steps/0/dependsOn/0',
    ]);
  });
});

describe('validate: E_FIELD', () => {
  it('reports a missing field with its path', () => {
    const { title: _, ...untitled } = step('a');
    const result = check([step('ok'), untitled as PlanStep]);
    expect(result.errors).toEqual([
      { code: 'E_FIELD', path: '/steps/1/title', message: 'missing required field "title"' },
    ]);
  });

  it('reports unknown fields on the plan and on a step', () => {
    const result = validate({ ...plan([{ ...step('a'), colour: 'red' } as PlanStep]), extra: true }, catalog);
    expect(where(result)).toEqual(['E_FIELD /extra', 'E_FIELD /steps/0/colour']);
  });

  it('reports wrong types, bad ids, blank text and out-of-range numbers', () => {
    const bad = { ...step('a b'), title: '   ', maxRetries: 11, confidenceThreshold: 2, dependsOn: 'x' };
    const result = validate(plan([bad as unknown as PlanStep], { objective: ' ', revision: 0 }), catalog);
    expect(where(result).sort()).toEqual(
      [
        'E_FIELD /revision',
        'E_FIELD /objective',
        'E_FIELD /steps/0/id',
        'E_FIELD /steps/0/title',
        'E_FIELD /steps/0/dependsOn',
        'E_FIELD /steps/0/maxRetries',
        'E_FIELD /steps/0/confidenceThreshold',
      ].sort(),
    );
    expect(result.errors.find((e) => e.path === '/steps/0/dependsOn')?.message).toBe('must be an array, got a string');
  });

  it('rejects a plan that is not an object, a step that is not an object, and missing or empty steps', () => {
    expect(where(validate([], catalog))).toEqual(['E_FIELD ']);
    expect(where(validate(plan(['x' as unknown as PlanStep]), catalog))).toEqual(['E_FIELD /steps/0']);
    expect(where(validate(plan([]), catalog))).toEqual(['E_FIELD /steps']);
    const { steps: _, ...stepless } = plan([]);
    expect(validate(stepless, catalog).errors).toEqual([
      { code: 'E_FIELD', path: '/steps', message: 'missing required field "steps"' },
    ]);
  });

  it('requires contracts on executable steps', () => {
    const { inputSchema: _, outputSchema: __, ...bare } = step('a');
    expect(where(check([bare as PlanStep]))).toEqual(['E_FIELD /steps/0/inputSchema', 'E_FIELD /steps/0/outputSchema']);
  });

  it('rejects the fields of executable steps on a group', () => {
    const g = group('g', [], { input: {}, approval: { question: 'q', timeoutSeconds: 1 }, inputSchema: {} });
    expect(where(check([g, step('a', [], { parentId: 'g' })]))).toEqual([
      'E_FIELD /steps/0/inputSchema',
      'E_FIELD /steps/0/input',
      'E_FIELD /steps/0/approval',
    ]);
  });

  it('rejects a dependency listed twice', () => {
    expect(where(check([step('a'), step('b', ['a', 'a'])]))).toEqual(['E_FIELD /steps/1/dependsOn/1']);
  });

  it('checks a static input against the catalog contract', () => {
    const result = check([step('a', [], { input: { url: 42 } })]);
    expect(where(result)).toEqual(['E_FIELD /steps/0/input']);
    expect(result.errors[0]?.message).toMatch(/inputSchema of tool:fetch.*\/url must be string/);
  });

  it('leaves an input with an expression, or no input, to run time', () => {
    expect(check([step('a'), step('b', ['a'], { input: { url: '{% $outputs.a.text %}', extra: 1 } })]).valid).toBe(
      true,
    );
    const { input: _, ...noInput } = step('a');
    expect(check([noInput as PlanStep]).valid).toBe(true);
  });
});

describe('validate: ids and dependencies', () => {
  it('E_DUPLICATE_ID points at the second use', () => {
    const result = check([step('a'), step('b'), step('a')]);
    expect(result.errors).toEqual([
      { code: 'E_DUPLICATE_ID', path: '/steps/2/id', message: 'duplicate step id "a" (first used at /steps/0)' },
    ]);
  });

  it('E_UNKNOWN_DEPENDENCY points at the dependsOn entry', () => {
    expect(where(check([step('a'), step('b', ['a', 'ghost'])]))).toEqual(['E_UNKNOWN_DEPENDENCY /steps/1/dependsOn/1']);
  });

  it('E_SELF_DEPENDENCY points at the entry, and is not also a cycle', () => {
    expect(where(check([step('a', ['a'])]))).toEqual(['E_SELF_DEPENDENCY /steps/0/dependsOn/0']);
    expect(where(check([group('g', ['g']), step('a', [], { parentId: 'g' })]))).toEqual([
      'E_SELF_DEPENDENCY /steps/0/dependsOn/0',
    ]);
  });
});

describe('validate: E_CYCLE', () => {
  it('names the steps of the cycle in order', () => {
    const result = check([step('a', ['c']), step('b', ['a']), step('c', ['b'])]);
    expect(result.errors).toEqual([
      { code: 'E_CYCLE', path: '/steps/0/dependsOn/0', message: 'cycle: a -> c -> b -> a' },
    ]);
  });

  it('finds a cycle in every connected component', () => {
    const result = check([step('a', ['b']), step('b', ['a']), step('x'), step('y', ['z']), step('z', ['y'])]);
    expect(result.errors.map((e) => e.message)).toEqual(['cycle: a -> b -> a', 'cycle: y -> z -> y']);
  });

  it('sees cycles through groups: a child depending on its own group', () => {
    const result = check([group('g'), step('a', ['g'], { parentId: 'g' })]);
    expect(codes(result)).toEqual(['E_CYCLE']);
    expect(result.errors[0]?.message).toMatch(/g/);
  });

  it('sees cycles through groups: a group depending on what depends on it', () => {
    const result = check([group('g', ['b']), step('a', [], { parentId: 'g' }), step('b', ['g'])]);
    expect(codes(result)).toEqual(['E_CYCLE']);
  });

  it('is still found when another step is broken', () => {
    const { title: _, ...untitled } = step('x');
    expect(codes(check([untitled as PlanStep, step('a', ['b']), step('b', ['a'])])).sort()).toEqual([
      'E_CYCLE',
      'E_FIELD',
    ]);
  });
});

describe('validate: E_PARENT', () => {
  it('rejects an unknown parent', () => {
    expect(where(check([step('a', [], { parentId: 'ghost' })]))).toEqual(['E_PARENT /steps/0/parentId']);
  });

  it('rejects a parent that is not a group', () => {
    const result = check([step('a'), step('b', [], { parentId: 'a' })]);
    expect(result.errors).toEqual([
      { code: 'E_PARENT', path: '/steps/1/parentId', message: 'parent "a" is not a group (its target is not null)' },
    ]);
  });

  it('rejects a parent cycle and a step that is its own parent', () => {
    const cyclic = check([
      group('g1', [], { parentId: 'g2' }),
      group('g2', [], { parentId: 'g1' }),
      step('a', [], { parentId: 'g1' }),
    ]);
    expect(where(cyclic)).toEqual(['E_PARENT /steps/0/parentId']);
    expect(cyclic.errors[0]?.message).toBe('parent cycle: g1 -> g2 -> g1');
    expect(where(check([group('g', [], { parentId: 'g' }), step('a', [], { parentId: 'g' })]))).toEqual([
      'E_PARENT /steps/0/parentId',
    ]);
  });

  it('rejects an empty group', () => {
    expect(where(check([group('g'), step('a', ['g'])]))).toEqual(['E_PARENT /steps/0']);
  });

  it('accepts nested groups and dependencies on groups', () => {
    const steps = [
      group('outer'),
      group('inner', [], { parentId: 'outer' }),
      step('a', [], { parentId: 'inner' }),
      step('b', ['a'], { parentId: 'outer' }),
      step('c', ['outer']),
    ];
    expect(check(steps)).toMatchObject({ valid: true });
  });
});

describe('validate: catalog rules', () => {
  it('E_UNKNOWN_TARGET', () => {
    expect(where(check([step('a', [], { target: 'tool:summarize' })]))).toEqual(['E_UNKNOWN_TARGET /steps/0/target']);
  });

  it('E_CONTRACT_MISMATCH on either schema, pointing at it and at the first difference', () => {
    const inputSchema = { ...step('a').inputSchema, properties: { url: { type: 'number' } } };
    const result = check([step('a', [], { inputSchema, input: { url: 1 } }), step('b', [], { outputSchema: {} })]);
    expect(where(result)).toEqual([
      'E_CONTRACT_MISMATCH /steps/0/inputSchema',
      'E_CONTRACT_MISMATCH /steps/1/outputSchema',
    ]);
    expect(result.errors[0]?.message).toMatch(/first at \/properties\/url\/type/);
  });

  it('accepts contracts with keys in another order', () => {
    const s = step('a');
    const reversed = Object.fromEntries(Object.entries(s.inputSchema ?? {}).reverse());
    expect(check([{ ...s, inputSchema: reversed }]).valid).toBe(true);
  });

  it('E_MISSING_ROLLBACK for a mutating target', () => {
    const { rollbackHint: _, ...deploy } = step('d', [], { target: 'tool:deploy' });
    expect(where(check([deploy as PlanStep]))).toEqual(['E_MISSING_ROLLBACK /steps/0/rollbackHint']);
  });

  it('E_APPROVAL for a human step without approval, and for approval on another step', () => {
    const { approval: _, ...review } = step('r', [], { target: 'human:review' });
    expect(where(check([review as PlanStep]))).toEqual(['E_APPROVAL /steps/0/approval']);
    const withApproval = step('a', [], { approval: { question: 'ok?', timeoutSeconds: 5 } });
    expect(where(check([withApproval]))).toEqual(['E_APPROVAL /steps/0/approval']);
  });
});

describe('validate: limits', () => {
  const independent = (n: number) => Array.from({ length: n }, (_, i) => step(`s${i}`));
  const chain = (n: number) => Array.from({ length: n }, (_, i) => step(`s${i}`, i === 0 ? [] : [`s${i - 1}`]));

  it('E_TOO_MANY_STEPS once at /steps, counting groups', () => {
    expect(check(independent(64)).valid).toBe(true);
    expect(where(check(independent(65)))).toEqual(['E_TOO_MANY_STEPS /steps']);
    expect(codes(check([group('g'), ...independent(64).map((s) => ({ ...s, parentId: 'g' }))]))).toEqual([
      'E_TOO_MANY_STEPS',
    ]);
  });

  it('keeps running the other checks past the step limit', () => {
    const steps = [...independent(70), step('x', ['ghost'])];
    expect(codes(check(steps))).toEqual(['E_TOO_MANY_STEPS', 'E_UNKNOWN_DEPENDENCY']);
  });

  it('E_TOO_DEEP when the longest path has more steps than allowed', () => {
    expect(check(chain(16)).valid).toBe(true);
    const result = check(chain(17));
    expect(where(result)).toEqual(['E_TOO_DEEP /steps/16']);
    expect(result.errors[0]?.message).toMatch(/^dependency depth 17 exceeds the limit of 16: s0 -> s1 -> s2 -> … /);
  });

  it('does not count groups in the depth', () => {
    const nested = [
      group('g1'),
      group('g2', [], { parentId: 'g1' }),
      step('a', [], { parentId: 'g2' }),
      step('b', ['g1']),
    ];
    expect(check(nested, { maxDepth: 2 }).valid).toBe(true);
    expect(codes(check(nested, { maxDepth: 1 }))).toEqual(['E_TOO_DEEP']);
  });

  it('takes limits from the caller', () => {
    expect(codes(check(independent(3), { maxSteps: 2 }))).toEqual(['E_TOO_MANY_STEPS']);
    expect(check(independent(100), { maxSteps: 100 }).valid).toBe(true);
    expect(check(chain(20), { maxDepth: 20 }).valid).toBe(true);
    expect(codes(check(chain(3), { maxDepth: 2 }))).toEqual(['E_TOO_DEEP']);
  });
});

describe('validate: E_EXPRESSION', () => {
  const reads = (source: string) => ({ input: { url: `{% ${source} %}` } });

  it('rejects an expression that does not parse, in input, when and successCriteria.assert', () => {
    const steps = [
      step('a', [], reads('$outputs.x[')),
      step('b', [], { when: '{% 1 + %}' }),
      step('c', [], { successCriteria: { description: 'd', assert: '{% ( %}' } }),
    ];
    expect(where(check(steps))).toEqual([
      'E_EXPRESSION /steps/0/input/url',
      'E_EXPRESSION /steps/1/when',
      'E_EXPRESSION /steps/2/successCriteria/assert',
    ]);
  });

  it('accepts references to direct and transitive upstream steps', () => {
    const steps = [step('a'), step('b', ['a']), step('c', ['b'], reads('$outputs.a.text & $outputs.b.text'))];
    expect(check(steps).valid).toBe(true);
  });

  it('rejects a reference to a step that is not upstream', () => {
    const result = check([step('a'), step('b', [], reads('$outputs.a.text'))]);
    expect(result.errors).toEqual([
      { code: 'E_EXPRESSION', path: '/steps/1/input/url', message: '$outputs.a: step "a" is not upstream of "b"' },
    ]);
    const downstream = check([step('a', [], { when: '{% $outputs.b.ok %}' }), step('b', ['a'])]);
    expect(where(downstream)).toEqual(['E_EXPRESSION /steps/0/when']);
  });

  it('rejects references to unknown steps and to the step itself', () => {
    expect(where(check([step('a', [], reads('$outputs.ghost'))]))).toEqual(['E_EXPRESSION /steps/0/input/url']);
    const own = check([step('a', [], { successCriteria: { description: 'd', assert: '{% $outputs.a.x %}' } })]);
    expect(own.errors[0]?.message).toMatch(/own output/);
  });

  it('follows group semantics: depending on a group reaches its descendants', () => {
    const steps = [
      group('g'),
      group('h', [], { parentId: 'g' }),
      step('a', [], { parentId: 'h' }),
      step('b', ['g'], reads('$outputs.a.text')),
    ];
    expect(check(steps).valid).toBe(true);
  });

  it("follows group semantics: an ancestor group's dependencies are the step's", () => {
    const steps = [step('a'), group('g', ['a']), step('b', [], { ...reads('$outputs.a.text'), parentId: 'g' })];
    expect(check(steps).valid).toBe(true);
    const sibling = [
      group('g'),
      step('a', [], { parentId: 'g' }),
      step('b', [], { ...reads('$outputs.a'), parentId: 'g' }),
    ];
    expect(codes(check(sibling))).toEqual(['E_EXPRESSION']);
  });

  it('follows group semantics through longer paths (upstream closure)', () => {
    const steps = [
      step('a'),
      group('g', ['a']),
      step('b', [], { parentId: 'g' }),
      step('c', ['g'], reads('$outputs.a.text')),
    ];
    expect(check(steps).valid).toBe(true);
  });

  it('rejects dynamic references and $outputs["x"] with E_DYNAMIC_REFERENCE', () => {
    const steps = [
      step('a'),
      step('b', ['a'], reads('$lookup($outputs, "a")')),
      step('c', ['a'], reads('$outputs["a"]')),
    ];
    const result = check(steps);
    expect(where(result)).toEqual(['E_DYNAMIC_REFERENCE /steps/1/input/url', 'E_DYNAMIC_REFERENCE /steps/2/input/url']);
    expect(result.errors[0]?.message).toMatch(/dynamic step reference/);
  });

  it.each([
    ['the parent operator', '$outputs.a.%.b', /parent operator/],
    ['the parent operator in a filter', '$outputs.a[%.b]', /parent operator/],
    ['a focus binding', '$outputs.a@$v.b', /keeps \$outputs as the context/],
    ['$eval', '$eval("$outputs.b")', /\$eval .* evaluates a string at run time/],
  ])('rejects %s, which reads a step it does not name, with E_DYNAMIC_REFERENCE', (_, source, message) => {
    // b is not upstream of c: the expression would read it all the same.
    const result = check([step('a'), step('b'), step('c', ['a'], reads(source))]);
    expect(where(result)).toEqual(['E_DYNAMIC_REFERENCE /steps/2/input/url']);
    expect(result.errors[0]?.message).toMatch(message);
  });

  it('reads ids with dashes and dots when quoted', () => {
    const steps = [step('fetch-a.1'), step('b', ['fetch-a.1'], reads('$outputs."fetch-a.1".text'))];
    expect(check(steps).valid).toBe(true);
  });
});

describe('validateGenerated: E_NOT_PENDING', () => {
  it('accepts pending, null result and null error', () => {
    const p = plan([step('a', [], { status: 'pending', result: null, error: null })]);
    expect(validateGenerated(p, catalog).valid).toBe(true);
  });

  it('rejects any other status, a result and an error', () => {
    const p = plan([step('a', [], { status: 'succeeded', result: { text: 'x' }, error: { code: 'E', message: 'm' } })]);
    expect(where(validateGenerated(p, catalog))).toEqual([
      'E_NOT_PENDING /steps/0/status',
      'E_NOT_PENDING /steps/0/result',
      'E_NOT_PENDING /steps/0/error',
    ]);
    expect(validate(p, catalog).valid).toBe(true);
  });
});

describe('validate: all errors at once', () => {
  it('reports every defect of a plan with many', () => {
    const { rollbackHint: _, ...deploy } = step('d', ['ghost'], { target: 'tool:deploy' });
    const steps = [
      step('a', ['a']),
      step('a'),
      deploy as PlanStep,
      step('x', [], { target: 'tool:nope', parentId: 'nowhere' }),
      step('y', [], { ...{ input: { url: '{% $outputs.a[ %}' } }, outputSchema: {} }),
      step('p', ['q']),
      step('q', ['p']),
    ];
    const result = validateGenerated(plan(steps), catalog);
    expect(new Set(codes(result))).toEqual(
      new Set([
        'E_SELF_DEPENDENCY',
        'E_DUPLICATE_ID',
        'E_UNKNOWN_DEPENDENCY',
        'E_MISSING_ROLLBACK',
        'E_UNKNOWN_TARGET',
        'E_PARENT',
        'E_EXPRESSION',
        'E_CONTRACT_MISMATCH',
        'E_CYCLE',
      ]),
    );
    for (const error of result.errors) expect(ISSUE_CODES).toContain(error.code);
  });
});

describe('validateText', () => {
  it('reports E_JSON for malformed text and duplicate keys', () => {
    expect(codes(validateText('{"schemaVersion": 1,', catalog))).toEqual(['E_JSON']);
    expect(where(validateText('{"schemaVersion": 1, "schemaVersion": 1}', catalog))).toEqual(['E_JSON /schemaVersion']);
  });

  it('validates the decoded plan, generated or not', () => {
    const text = JSON.stringify(plan([step('a', [], { status: 'running' })]));
    expect(validateText(text, catalog).valid).toBe(true);
    expect(codes(validateText(text, catalog, {}, { generated: true }))).toEqual(['E_NOT_PENDING']);
    expect(codes(validateText(JSON.stringify(plan([step('a'), step('b')])), catalog, { maxSteps: 1 }))).toEqual([
      'E_TOO_MANY_STEPS',
    ]);
  });
});
