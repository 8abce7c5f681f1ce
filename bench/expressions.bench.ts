/**
 * `npm run bench:expressions`: what bounding plan expressions costs per evaluation. Four ways to evaluate the small
 * expressions a step's claim and verification evaluate (a path into an upstream output, a condition, a string
 * built from two outputs), over realistic bindings (three upstream outputs of a few KB):
 *
 * - `unbounded`: JSONata compiled once and evaluated in this thread, as before the sandbox;
 * - `in-thread bounded`: the same with the sandbox's guardrails and plain-JSON result (no isolation);
 * - `worker, 1 per request`: through the worker-process pool, one expression per request (a `when`, an assertion);
 * - `worker, 5 per request`: one request for a claim's five input expressions, per expression.
 *
 * Prints the median of several rounds in microseconds per expression. Timing belongs here, not in tests.
 */
import jsonata from 'jsonata';
import { createWorkerEvaluator } from '../shared/adapters/expressions/worker-evaluator.ts';
import { defaultExpressionLimits, evaluateBounded } from '../shared/plan/expression-limits.ts';
import { expressionBody } from '../shared/plan/expressions.ts';

const ROUNDS = 5;
const PER_ROUND = 400;

const SOURCES = [
  '{% $outputs.search.hits[0].url %}',
  '{% $count($outputs.search.hits) > 2 %}',
  '{% $outputs.fetch.title & " — " & $objective %}',
  '{% $outputs.summarize.text %}',
  '{% {"q": $outputs.search.query, "n": $count($outputs.fetch.paragraphs)} %}',
];

const hits = Array.from({ length: 20 }, (_, i) => ({ title: `hit ${i}`, url: `https://example.com/${i}`, score: i }));
const bindings = {
  objective: 'compare three vendors and write a summary',
  outputs: {
    search: { query: 'vendors', hits },
    fetch: { title: 'Vendor A', paragraphs: Array.from({ length: 30 }, (_, i) => `paragraph ${i} `.repeat(8)) },
    summarize: { text: 'x'.repeat(2000) },
  },
};

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function measure(name: string, perRound: number, run: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 50; i++) await run(); // warm up: compile caches, JIT
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    for (let i = 0; i < PER_ROUND; i++) await run();
    rounds.push(((performance.now() - started) * 1000) / (PER_ROUND * perRound));
  }
  console.log(`${name.padEnd(26)} ${median(rounds).toFixed(1).padStart(8)} µs per expression`);
}

const compiled = SOURCES.map((source) => jsonata(expressionBody(source)));
const limits = defaultExpressionLimits();
const evaluator = createWorkerEvaluator({ limits, workers: 2 });
await evaluator.warm();

let k = 0;
const next = () => {
  k = (k + 1) % SOURCES.length;
  return k;
};
const vars = { objective: bindings.objective, outputs: bindings.outputs };
await measure('unbounded (before)', 1, () => (compiled[next()] as jsonata.Expression).evaluate(undefined, vars));
await measure('in-thread bounded', 1, () => evaluateBounded(SOURCES[next()] as string, bindings, limits));
await measure('worker, 1 per request', 1, () => evaluator.evaluate({ sources: [SOURCES[next()] as string], bindings }));
await measure('worker, 5 per request', SOURCES.length, () => evaluator.evaluate({ sources: SOURCES, bindings }));
await evaluator.close();
