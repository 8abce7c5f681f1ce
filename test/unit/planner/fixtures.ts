/** Shared arrangements for the planner tests: the demo catalog and a tiny catalog built from scratch. */
import demoCatalogDocument from '../../../shared/catalog/demo.json' with { type: 'json' };
import { type Catalog, loadCatalog } from '../../../shared/plan/catalog.ts';
import type { Capability, SideEffect } from '../../../shared/plan/schema.ts';
import { planJsonSchema } from '../../../shared/plan/schema.ts';
import { DEFAULT_LIMITS } from '../../../shared/plan/validate.ts';
import type { PlanModelRequest } from '../../../shared/ports/plan-model.ts';

export const demoCatalog = (): Catalog => loadCatalog(structuredClone(demoCatalogDocument));

/** A capability whose contracts take and return `{ value: string }`. */
export const capability = (target: string, sideEffect: SideEffect = 'none', alternatives?: string[]): Capability => ({
  target,
  description: `test capability ${target}`,
  inputSchema: { type: 'object', properties: { value: { type: 'string' } } },
  outputSchema: { type: 'object', properties: { value: { type: 'string' } } },
  sideEffect,
  ...(alternatives ? { alternatives } : {}),
});

export const modelRequest = (
  objective: string,
  catalog: Catalog,
  limits: Partial<typeof DEFAULT_LIMITS> = {},
): PlanModelRequest => ({
  objective,
  catalog: catalog.capabilities(),
  planSchema: planJsonSchema(),
  limits: { ...DEFAULT_LIMITS, ...limits },
});

/** The catalog without some targets (and without alternatives that point at them). */
export function catalogWithout(catalog: Catalog, ...removed: string[]): Catalog {
  const capabilities = catalog
    .capabilities()
    .filter((c) => !removed.includes(c.target))
    .map((c) => {
      const alternatives = c.alternatives?.filter((a) => !removed.includes(a));
      const { alternatives: _dropped, ...rest } = c;
      return alternatives?.length ? { ...rest, alternatives } : rest;
    });
  return loadCatalog({ capabilities });
}
