/**
 * The shapes the engine bench runs: seeded, so two runs with the same seed bench the same DAGs. A shape is ids and
 * edges only; `toSteps` binds it to a conformance capability (sleep with a duration, or the zero-work echo).
 */
import type { LocalStack } from '../../infra/local/boot.ts';
import { CONFORMANCE_TARGETS } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';

export interface Node {
  readonly id: string;
  readonly dependsOn: readonly string[];
}

/** Deterministic PRNG (mulberry32). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [min, max]. */
export const between = (rnd: () => number, min: number, max: number): number =>
  min + Math.floor(rnd() * (max - min + 1));

/** k distinct picks among 0..n-1 (k ≤ n). */
function pick(rnd: () => number, n: number, k: number): number[] {
  const chosen = new Set<number>();
  while (chosen.size < Math.min(k, n)) chosen.add(Math.floor(rnd() * n));
  return [...chosen].sort((a, b) => a - b);
}

/** `layers` × `width` steps; each step after the first layer depends on 1–3 steps of the layer before. */
export function layered(layers: number, width: number, rnd: () => number, prefix = 'l'): Node[] {
  const id = (layer: number, i: number) => `${prefix}${layer}_${i}`;
  const nodes: Node[] = [];
  for (let layer = 0; layer < layers; layer++)
    for (let i = 0; i < width; i++)
      nodes.push({
        id: id(layer, i),
        dependsOn: layer === 0 ? [] : pick(rnd, width, between(rnd, 1, 3)).map((j) => id(layer - 1, j)),
      });
  return nodes;
}

/** `n` steps, each with 0–`maxParents` parents among any earlier steps. */
export function randomParents(n: number, maxParents: number, rnd: () => number, prefix = 'r'): Node[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${prefix}${i}`,
    dependsOn: pick(rnd, i, between(rnd, 0, maxParents)).map((j) => `${prefix}${j}`),
  }));
}

/**
 * The coarse DAG of the first bench (same draws, so the same DAG for a seed as before): each step depends on up to 3
 * of the 20 steps before it and sleeps 100–600 ms.
 */
export function coarseDag(stack: LocalStack, n: number, target: string, rnd: () => number): PlanStep[] {
  return Array.from({ length: n }, (_, i) => {
    const deps = new Set<string>();
    const fanIn = i === 0 ? 0 : Math.floor(rnd() * 4);
    for (let k = 0; k < fanIn; k++) deps.add(`s${Math.max(0, i - 1 - Math.floor(rnd() * 20))}`);
    const ms = 100 + Math.floor(rnd() * 500);
    return contractStep(stack, `s${i}`, target, {
      dependsOn: [...deps],
      input: { ms },
      estimatedDurationSeconds: ms / 1000,
    });
  });
}

/** One fork step, `chains` parallel chains of `minLength`–`maxLength` steps, one join step. */
export function forkJoin(chains: number, minLength: number, maxLength: number, rnd: () => number): Node[] {
  const nodes: Node[] = [{ id: 'fork', dependsOn: [] }];
  const tails: string[] = [];
  for (let c = 0; c < chains; c++) {
    let previous = 'fork';
    const length = between(rnd, minLength, maxLength);
    for (let i = 0; i < length; i++) {
      const id = `c${c}_${i}`;
      nodes.push({ id, dependsOn: [previous] });
      previous = id;
    }
    tails.push(previous);
  }
  nodes.push({ id: 'join', dependsOn: tails });
  return nodes;
}

export function chain(n: number, prefix = 'k'): Node[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${prefix}${i}`,
    dependsOn: i === 0 ? [] : [`${prefix}${i - 1}`],
  }));
}

/** A plan step bound to a catalog capability, with the contracts the validator asks of a submitted plan. */
export function contractStep(stack: LocalStack, id: string, target: string, fields: Partial<PlanStep>): PlanStep {
  const capability = stack.catalog.get(target);
  if (!capability) throw new Error(`no ${target} in the catalog`);
  return {
    id,
    title: id,
    target,
    dependsOn: [],
    inputSchema: capability.inputSchema,
    outputSchema: capability.outputSchema,
    ...fields,
  };
}

/** Binds every node to `target`; `fieldsOf` gives its input (and estimate). */
export function toSteps(
  stack: LocalStack,
  nodes: readonly Node[],
  target: string,
  fieldsOf: (node: Node, index: number) => Partial<PlanStep>,
): PlanStep[] {
  return nodes.map((node, i) =>
    contractStep(stack, node.id, target, { dependsOn: [...node.dependsOn], ...fieldsOf(node, i) }),
  );
}

/** Sleep steps of `min`–`max` ms each (drawn from `rnd` in plan order), estimates set to the planned sleep. */
export function sleepSteps(
  stack: LocalStack,
  nodes: readonly Node[],
  target: string,
  rnd: () => number,
  min: number,
  max: number,
): PlanStep[] {
  return toSteps(stack, nodes, target, () => {
    const ms = between(rnd, min, max);
    return { input: { ms }, estimatedDurationSeconds: ms / 1000 };
  });
}

/** Zero-work steps: tool:conformance.echo returns its input without waiting. */
export const echoSteps = (stack: LocalStack, nodes: readonly Node[]): PlanStep[] =>
  toSteps(stack, nodes, CONFORMANCE_TARGETS.echo, (_, i) => ({ input: { value: i } }));
