import { describe, expect, it } from 'vitest';
import { isPlannerError } from '../../../../shared/errors.ts';
import { loadCatalog } from '../../../../shared/plan/catalog.ts';
import { DEFAULT_LIMITS, validateGenerated } from '../../../../shared/plan/validate.ts';
import { plannerErrorCode } from '../../../../shared/planner/errors.ts';
import { decompose } from '../../../../shared/planner/htn/engine.ts';
import { expr } from '../../../../shared/planner/htn/text.ts';
import {
  compound,
  type DecomposeOptions,
  type Method,
  primitive,
  ROOT_TASK,
} from '../../../../shared/planner/htn/types.ts';
import { capability } from '../fixtures.ts';

const catalog = loadCatalog({
  capabilities: [
    capability('tool:a'),
    capability('tool:b', 'none', ['tool:b2']),
    capability('tool:b2', 'none', ['tool:b']),
    capability('agent:join'),
  ],
});

// objective → [fan-out compound (two leaves, or one leaf), join]
const library = (extra: Method[] = []): Method[] => [
  {
    name: 'fan-out-and-join',
    task: ROOT_TASK,
    expand: () => [
      compound({ key: 'fan', task: 'fan', title: 'Fan out' }),
      primitive({
        key: 'join',
        title: 'Join',
        target: 'agent:join',
        after: ['fan'],
        input: (r) => ({ value: expr(`$string(${r.outputs('fan')})`) }),
      }),
    ],
  },
  ...extra,
  {
    name: 'two-leaves',
    task: 'fan',
    expand: () => [
      primitive({ key: 'left', title: 'Left', target: 'tool:a' }),
      primitive({ key: 'right', title: 'Right', target: 'tool:b' }),
    ],
  },
  { name: 'one-leaf', task: 'fan', expand: () => [primitive({ key: 'only', title: 'Only', target: 'tool:a' })] },
];

const run = (methods: Method[], options: DecomposeOptions = {}, limits = DEFAULT_LIMITS, cat = catalog) =>
  decompose({ objective: 'do it', catalog: cat.capabilities(), limits, methods, options });

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (error) {
    if (!isPlannerError(error)) throw error;
    return plannerErrorCode(error);
  }
  return undefined;
};

describe('decompose', () => {
  it('turns a compound task with several children into a group step whose children carry its id as parent', () => {
    const { plan } = run(library());
    expect(plan.steps.map((s) => [s.id, s.target, s.parentId ?? null, s.dependsOn])).toEqual([
      ['fan', null, null, []],
      ['fan.left', 'tool:a', 'fan', []],
      ['fan.right', 'tool:b', 'fan', []],
      ['join', 'agent:join', null, ['fan']],
    ]);
    expect(validateGenerated(plan, catalog).valid).toBe(true);
  });

  it('reads the outputs of every result step of a compound sibling', () => {
    const join = run(library()).plan.steps.find((s) => s.id === 'join');
    expect(join?.input).toEqual({ value: '{% $string([$outputs.`fan.left`, $outputs.`fan.right`]) %}' });
  });

  it('copies the contracts of the catalog and emits pending steps with null result and error', () => {
    const step = run(library()).plan.steps.find((s) => s.id === 'fan.left');
    expect(step?.inputSchema).toEqual(catalog.get('tool:a')?.inputSchema);
    expect(step?.outputSchema).toEqual(catalog.get('tool:a')?.outputSchema);
    expect(step).toMatchObject({ status: 'pending', result: null, error: null });
  });

  it('lets the only child of a compound take its place and id instead of making a group', () => {
    const { plan } = run(library(), { excludeMethods: [{ path: 'fan', method: 'two-leaves' }] });
    expect(plan.steps.map((s) => [s.id, s.target, s.parentId ?? null])).toEqual([
      ['fan', 'tool:a', null],
      ['join', 'agent:join', null],
    ]);
    expect(plan.steps[1]?.input).toEqual({ value: '{% $string([$outputs.fan]) %}' });
  });

  it('backtracks to the next method when a method needs a target the catalog lacks', () => {
    const lean = loadCatalog({ capabilities: [capability('tool:a'), capability('agent:join')] });
    const { plan, choices } = run(library(), {}, DEFAULT_LIMITS, lean);
    expect(choices).toMatchObject([
      { path: '', task: ROOT_TASK, method: 'fan-out-and-join' },
      { path: 'fan', task: 'fan', method: 'one-leaf' },
    ]);
    expect(plan.steps.map((s) => s.id)).toEqual(['fan', 'join']);
  });

  it('records the method chosen for every compound task in expansion order', () => {
    expect(run(library()).choices).toMatchObject([
      { path: '', task: ROOT_TASK, method: 'fan-out-and-join' },
      { path: 'fan', task: 'fan', method: 'two-leaves' },
    ]);
  });
});

describe('decompose reasoning', () => {
  it('says why each method was chosen: its own words, or that the catalog has its targets', () => {
    const methods: Method[] = [
      { ...(library()[0] as Method), why: () => 'the objective fans out' },
      ...library().slice(1),
    ];
    expect(run(methods).choices.map((c) => c.why)).toEqual([
      'the objective fans out',
      'the catalog has every target it needs',
    ]);
  });

  it('names the methods passed over before the chosen one, each with the reason', () => {
    const lean = loadCatalog({ capabilities: [capability('tool:a'), capability('agent:join')] });
    const { choices } = run(library(), {}, DEFAULT_LIMITS, lean);
    expect(choices[1]?.why).toBe(
      'the catalog has every target it needs; passed over: two-leaves (needs tool:b, which the catalog lacks)',
    );
    const excluded = run(library(), { excludeMethods: [{ path: 'fan', method: 'two-leaves' }] }).choices;
    expect(excluded[1]?.why).toContain('passed over: two-leaves (excluded by a replan)');
  });

  it('names the condition a bound method checked, and a root method abandoned over the limits', () => {
    const methods: Method[] = [
      { name: 'never', task: ROOT_TASK, bind: () => undefined, expand: () => [] },
      ...library(),
      {
        name: 'bound',
        task: ROOT_TASK,
        bind: ({ objective }) => ({ word: objective.split(' ')[0] ?? '' }),
        expand: () => [primitive({ key: 'x', title: 'X', target: 'tool:a' })],
      },
    ];
    const { choices } = run(methods, {}, { maxSteps: 2, maxDepth: 16 });
    expect(choices).toEqual([
      {
        path: '',
        task: ROOT_TASK,
        method: 'bound',
        why:
          'its precondition holds (word=do); passed over: never (its precondition does not hold), ' +
          'fan-out-and-join (the plan would exceed the limits)',
      },
    ]);
  });

  it('puts every choice and its reason into the plan rationale, which validates', () => {
    const { plan } = run(library());
    expect(plan.rationale).toBe(
      'HTN: objective: method fan-out-and-join, because the catalog has every target it needs; ' +
        'fan (fan): method two-leaves, because the catalog has every target it needs.',
    );
    expect(validateGenerated(plan, catalog).valid).toBe(true);
  });
});

describe('decompose, continued', () => {
  it('abandons a root method whose plan exceeds the limits for the next root method', () => {
    const single: Method = {
      name: 'single',
      task: ROOT_TASK,
      expand: () => [primitive({ key: 'solo', title: 'Solo', target: 'tool:a' })],
    };
    const { plan, choices } = run([...library(), single], {}, { maxSteps: 3, maxDepth: 16 });
    expect(plan.steps.map((s) => s.id)).toEqual(['solo']);
    expect(choices.map((c) => c.method)).toEqual(['single']);
    expect(run([...library(), single], {}, { maxSteps: 64, maxDepth: 1 }).plan.steps.map((s) => s.id)).toEqual([
      'solo',
    ]);
  });

  it('substitutes a target only with one of its catalog alternatives', () => {
    const swapped = run(library(), { substituteTargets: { 'tool:b': 'tool:b2' } }).plan;
    expect(swapped.steps.find((s) => s.id === 'fan.right')?.target).toBe('tool:b2');
    expect(validateGenerated(swapped, catalog).valid).toBe(true);
    const refused = run(library(), { substituteTargets: { 'tool:a': 'tool:b2' } }).plan;
    expect(refused.steps.find((s) => s.id === 'fan.left')?.target).toBe('tool:a');
  });

  it('skips excluded methods at the given path only', () => {
    const { choices } = run(library(), { excludeMethods: [{ path: 'elsewhere', method: 'two-leaves' }] });
    expect(choices.map((c) => c.method)).toEqual(['fan-out-and-join', 'two-leaves']);
  });

  it('skips a method whose binding returns undefined and passes bound params to the expansion', () => {
    const seen: unknown[] = [];
    const methods: Method[] = [
      { name: 'never', task: ROOT_TASK, bind: () => undefined, expand: () => [] },
      {
        name: 'bound',
        task: ROOT_TASK,
        bind: ({ objective }) => ({ word: objective.split(' ')[0] ?? '' }),
        expand: ({ params }) => {
          seen.push(params.word);
          return [primitive({ key: 'x', title: 'X', target: 'tool:a' })];
        },
      },
    ];
    expect(run(methods).choices.map((c) => c.method)).toEqual(['bound']);
    expect(seen).toEqual(['do']);
  });

  it('resolves a reference through enclosing networks and into a compound by dotted path', () => {
    const methods: Method[] = [
      {
        name: 'root',
        task: ROOT_TASK,
        expand: () => [
          compound({ key: 'fan', task: 'fan', title: 'Fan out' }),
          compound({ key: 'after', task: 'after', title: 'After', after: ['fan'] }),
        ],
      },
      ...library().slice(1),
      {
        name: 'reader',
        task: 'after',
        expand: () => [
          primitive({
            key: 'read',
            title: 'Read',
            target: 'agent:join',
            input: (r) => ({ value: expr(`${r.output('fan.right')}.value`), has: r.has('fan.nothing') }),
          }),
        ],
      },
    ];
    const read = run(methods).plan.steps.find((s) => s.id === 'after');
    expect(read?.input).toEqual({ value: '{% $outputs.`fan.right`.value %}', has: false });
  });

  it('reports E_NO_METHOD when no root method decomposes the objective', () => {
    const empty = loadCatalog({ capabilities: [capability('tool:zzz')] });
    expect(codeOf(() => run(library(), {}, DEFAULT_LIMITS, empty))).toBe('E_NO_METHOD');
  });

  it('reports E_METHOD for a method that waits for a later sibling', () => {
    const bad: Method = {
      name: 'bad',
      task: ROOT_TASK,
      expand: () => [
        primitive({ key: 'first', title: 'First', target: 'tool:a', after: ['second'] }),
        primitive({ key: 'second', title: 'Second', target: 'tool:a' }),
      ],
    };
    expect(codeOf(() => run([bad]))).toBe('E_METHOD');
  });

  it('reports E_METHOD for repeated keys, bad keys and references out of scope', () => {
    const keyed = (a: string, b: string): Method => ({
      name: 'keys',
      task: ROOT_TASK,
      expand: () => [
        primitive({ key: a, title: 'A', target: 'tool:a' }),
        primitive({ key: b, title: 'B', target: 'tool:a' }),
      ],
    });
    expect(codeOf(() => run([keyed('x', 'x')]))).toBe('E_METHOD');
    expect(codeOf(() => run([keyed('x', 'has.dot')]))).toBe('E_METHOD');
    const dangling: Method = {
      name: 'dangling',
      task: ROOT_TASK,
      expand: () => [primitive({ key: 'x', title: 'X', target: 'tool:a', input: (r) => r.output('ghost') })],
    };
    expect(codeOf(() => run([dangling]))).toBe('E_METHOD');
  });

  it('is deterministic: the same input gives byte-identical plans', () => {
    expect(JSON.stringify(run(library()))).toBe(JSON.stringify(run(library())));
  });
});
