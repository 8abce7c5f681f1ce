/**
 * `npm run bench:validate`: how much validating a plan costs next to merely parsing its JSON. Generates realistic
 * plans (random DAG, groups, JSONata inputs and conditions reading direct and distant upstream steps, contracts
 * copied from a catalog, human gates, mutating steps) of 64, 1,000 and 10,000 steps and prints, per size, the median times of JSON.parse, of validateText
 * (strict parse + validate) and of validate on the parsed object, with their ratios to JSON.parse, all measured
 * in this one run. Target: validate ≤ 5 × JSON.parse at 10,000 steps.
 */
import { loadCatalog } from '../shared/plan/catalog.ts';
import type { Capability, Plan, PlanStep } from '../shared/plan/schema.ts';
import { validate, validateText } from '../shared/plan/validate.ts';
import { random } from './engine/dags.ts';

const SIZES = [64, 1_000, 10_000];
const TARGET_RATIO = 5;

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';
type Contract = Capability['inputSchema'];
type Json = Contract[string];
const objectSchema = (properties: Record<string, Json>, extra: Contract = {}): Contract => ({
  $schema: DIALECT,
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
  ...extra,
});
const hit: Json = {
  type: 'object',
  properties: { title: { type: 'string' }, url: { type: 'string' }, score: { type: 'number', minimum: 0 } },
  required: ['title', 'url'],
  additionalProperties: false,
};

function capability(target: string, sideEffect: Capability['sideEffect'], index: number): Capability {
  return {
    target,
    description: `capability ${index}`,
    sideEffect,
    inputSchema: objectSchema(
      {
        query: { type: 'string', minLength: 1, maxLength: 2000 },
        limit: { type: 'integer', minimum: 1, maximum: 100 },
        sources: { type: 'array', items: { $ref: '#/$defs/hit' } },
      },
      { $defs: { hit } },
    ),
    outputSchema: objectSchema(
      {
        text: { type: 'string' },
        hits: { type: 'array', items: { $ref: '#/$defs/hit' } },
        confidence: { type: 'number', minimum: 0, maximum: 1 },
        [`field${index}`]: { type: 'string' },
      },
      { $defs: { hit } },
    ),
  };
}

const CAPABILITIES: Capability[] = [
  ...Array.from({ length: 8 }, (_, i) => capability(`tool:t${i}`, i % 3 === 0 ? 'idempotent' : 'none', i)),
  ...Array.from({ length: 4 }, (_, i) => capability(`agent:a${i}`, 'none', 10 + i)),
  capability('tool:deploy', 'mutating', 20),
  capability('human:review', 'none', 21),
];
const catalog = loadCatalog({ capabilities: CAPABILITIES });

/** A plan of `size` steps (groups included) that validates with limits raised to its size. */
function generatePlan(size: number, seed: number): Plan {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const groupCount = Math.max(2, Math.floor(size / 100));
  const executable = size - groupCount;
  const steps: PlanStep[] = [];
  for (let i = 0; i < executable; i += 1) {
    const cap = i === executable - 1 ? CAPABILITIES[CAPABILITIES.length - 2] : pick(CAPABILITIES);
    if (!cap) throw new Error('no capability');
    const dependsOn = new Set<string>();
    const fanIn = i === 0 ? 0 : 1 + Math.floor(next() * 3);
    // Mostly recent steps, so the graph has long chains as well as wide joins.
    for (let k = 0; k < fanIn; k += 1) dependsOn.add(`s${Math.max(0, i - 1 - Math.floor(next() * Math.min(i, 40)))}`);
    const deps = [...dependsOn];
    const first = deps[0];
    const step: PlanStep = {
      id: `s${i}`,
      title: `Step ${i}: ${cap.description}`,
      description: 'Generated for the validation benchmark.',
      target: cap.target,
      dependsOn: deps,
      input:
        first !== undefined && next() < 0.6
          ? { query: `{% $outputs.${first}.text & " " & $objective %}`, limit: 10 }
          : { query: `static query ${i}`, limit: 1 + (i % 100), sources: [{ title: 'a', url: 'https://a.example' }] },
      inputSchema: structuredClone(cap.inputSchema),
      outputSchema: structuredClone(cap.outputSchema),
      maxRetries: i % 4,
      estimatedDurationSeconds: 1 + (i % 30),
    };
    // Some conditions read a step further up (a dependency of a dependency): the validator must trace those.
    const further = first === undefined ? undefined : steps[Number(first.slice(1))]?.dependsOn[0];
    if (further !== undefined && next() < 0.1) step.when = `{% $outputs.${further}.confidence > 0.5 %}`;
    else if (first !== undefined && next() < 0.2) step.when = `{% $count($outputs.${first}.hits) > 0 %}`;
    if (next() < 0.3) step.successCriteria = { description: 'has text', assert: '{% $exists($output.text) %}' };
    if (cap.sideEffect === 'mutating') step.rollbackHint = 'redeploy the previous version';
    if (cap.target.startsWith('human:')) step.approval = { question: 'Approve?', timeoutSeconds: 3600 };
    steps.push(step);
  }
  // Groups over consecutive ranges; a later step sometimes depends on a whole earlier group.
  const span = Math.floor(executable / groupCount);
  for (let g = 0; g < groupCount; g += 1) {
    const start = g * span;
    const groupId = `g${g}`;
    for (let i = start; i < start + Math.min(span, 10); i += 1) {
      const child = steps[i];
      if (child) child.parentId = groupId;
    }
    steps.push({ id: groupId, title: `Group ${g}`, target: null, dependsOn: start > 0 ? [`s${start - 1}`] : [] });
    const dependent = steps[start + span + 1];
    if (dependent && start + span + 1 < executable) dependent.dependsOn = [...dependent.dependsOn, groupId];
  }
  return { schemaVersion: 1, revision: 1, objective: 'Benchmark the validator', steps };
}

function median(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Median of `runs` timed calls of fn, after a few untimed ones (JIT); `prepare` runs untimed before each call. */
function time<T>(runs: number, fn: (input: T) => void, prepare?: () => T): number {
  for (let i = 0; i < 3; i += 1) fn((prepare?.() ?? undefined) as T);
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const input = (prepare?.() ?? undefined) as T;
    const start = performance.now();
    fn(input);
    times.push(performance.now() - start);
  }
  return median(times);
}

// Steady state, as in the long-running API process: let the JIT compile the validator before anything is timed.
{
  const text = JSON.stringify(generatePlan(200, 1));
  for (let i = 0; i < 50; i += 1) validateText(text, catalog, { maxSteps: 200, maxDepth: 200 });
}

const rows: string[][] = [['steps', 'JSON', 'JSON.parse', 'validateText', 'validate', 'text/parse', 'validate/parse']];
let worst = 0;
for (const size of SIZES) {
  const plan = generatePlan(size, size);
  const text = JSON.stringify(plan);
  const limits = { maxSteps: size, maxDepth: size };
  const parsed: unknown = JSON.parse(text);
  const check = validate(parsed, catalog, limits);
  if (!check.valid)
    throw new Error(`generated plan of ${size} steps is invalid: ${JSON.stringify(check.errors.slice(0, 3))}`);
  const runs = size >= 10_000 ? 9 : 21;
  const parseMs = time(runs, () => JSON.parse(text));
  const textMs = time(runs, () => validateText(text, catalog, limits));
  // Each validate gets an object of its own, parsed outside the timed part: nothing can be cached on it.
  const validateMs = time(
    runs,
    (value: unknown) => validate(value, catalog, limits),
    () => JSON.parse(text) as unknown,
  );
  if (size === SIZES[SIZES.length - 1]) worst = validateMs / parseMs;
  rows.push([
    String(size),
    `${(text.length / 1e6).toFixed(2)} MB`,
    `${parseMs.toFixed(2)} ms`,
    `${textMs.toFixed(2)} ms`,
    `${validateMs.toFixed(2)} ms`,
    `${(textMs / parseMs).toFixed(2)}×`,
    `${(validateMs / parseMs).toFixed(2)}×`,
  ]);
}
const widths = rows[0]?.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length))) ?? [];
for (const row of rows) console.log(row.map((cell, c) => cell.padStart(widths[c] ?? 0)).join('  '));
const verdict = worst <= TARGET_RATIO ? 'meets' : 'MISSES';
console.log(
  `validate/JSON.parse at ${SIZES[SIZES.length - 1]} steps: ${worst.toFixed(2)}× (${verdict} the ≤ ${TARGET_RATIO}× target)`,
);
