/**
 * bench:scale's plans: zero-work steps (the conformance pack's echo) in layers, each step depending on one step of
 * the layer before, so what is measured is the engine and the platform's quotas, not the work.
 */

export interface ScalePlan {
  readonly schemaVersion: 1;
  readonly revision: 1;
  readonly objective: string;
  readonly steps: readonly unknown[];
}

/**
 * The contract every step carries, the same as the catalog's: the bench's catalog (benchCatalog) gives the echo this
 * shortest one, so a 5,000-step plan stays under the API's 1 MB body (the pack's own would take 1.5 MB).
 */
const OBJECT = { type: 'object' } as const;

/** A catalog (CAIRN_CATALOG_FILE) that gives the conformance echo, still bound to the pack's own, that contract. */
export const benchCatalog = (echo: Record<string, unknown>) => ({
  capabilities: [{ ...echo, inputSchema: OBJECT, outputSchema: OBJECT }],
});
/** Layers of the given widths; a step of a layer depends on step `i mod width-before` of the layer before. */
export function layeredPlan(objective: string, widths: readonly number[]): ScalePlan {
  const steps: unknown[] = [];
  let before: string[] = [];
  widths.forEach((width, layer) => {
    const ids = Array.from({ length: width }, (_, i) => `l${layer}s${i}`);
    ids.forEach((id, i) => {
      steps.push({
        id,
        title: id,
        target: 'tool:conformance.echo',
        dependsOn: before.length === 0 ? [] : [before[i % before.length]],
        input: { value: steps.length },
        inputSchema: OBJECT,
        outputSchema: OBJECT,
      });
    });
    before = ids;
  });
  return { schemaVersion: 1, revision: 1, objective, steps };
}

/** A run of `steps` steps in layers of `width` (the many-runs workload: 20 steps, 5 wide). */
export const smallRunPlan = (index: number, steps: number, width: number): ScalePlan =>
  layeredPlan(
    `scale run ${index}`,
    Array.from({ length: Math.ceil(steps / width) }, (_, layer) => Math.min(width, steps - layer * width)),
  );

/** One plan of `steps` steps whose middle layer is `middle` wide, the rest split before and after it. */
export function widePlan(steps: number, middle: number): ScalePlan {
  const rest = Math.max(0, steps - middle);
  const before = Math.ceil(rest / 2);
  const after = rest - before;
  return layeredPlan(
    `scale: ${steps} steps, a middle layer ${middle} wide`,
    [before, middle, after].filter((width) => width > 0),
  );
}
