/**
 * DIRECT mode: one pending step for a registered target, built from the catalog alone (no model). The input is
 * the caller's when given; otherwise, when the contract asks for exactly one string, the objective fills it, and
 * in every other case the input is left out for the caller to supply before the step runs.
 */
import { type Capability, PLAN_SCHEMA_VERSION, type Plan, type PlanStep, STEP_ID_PATTERN } from '../plan/schema.ts';
import { clip } from './htn/text.ts';

/** How long a DIRECT human step waits for its answer. */
export const DIRECT_APPROVAL_TIMEOUT_SECONDS = 86_400;

/** The step id for a target: its name with characters an id cannot hold turned into dashes. */
export function directStepId(target: string): string {
  const name = target.slice(target.indexOf(':') + 1);
  const id = name
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64);
  return STEP_ID_PATTERN.test(id) ? id : 'direct';
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{ <field>: "{% $objective %}" }` when the contract's only required field is a string; undefined otherwise. */
export function objectiveInput(contract: Record<string, unknown>): Record<string, string> | undefined {
  const required = contract.required;
  const properties = contract.properties;
  if (contract.type !== 'object' || !Array.isArray(required) || required.length !== 1 || !isRecord(properties))
    return undefined;
  const [field] = required;
  if (typeof field !== 'string') return undefined;
  const property = properties[field];
  return isRecord(property) && property.type === 'string' ? { [field]: '{% $objective %}' } : undefined;
}

export function buildDirectPlan(objective: string, capability: Capability, input?: unknown): Plan {
  const kind = capability.target.slice(0, capability.target.indexOf(':'));
  const stepInput = input === undefined ? objectiveInput(capability.inputSchema) : input;
  const step: PlanStep = {
    id: directStepId(capability.target),
    title: clip(objective, 200) || capability.target,
    description: capability.description,
    target: capability.target,
    dependsOn: [],
    ...(stepInput === undefined ? {} : { input: structuredClone(stepInput) as PlanStep['input'] }),
    inputSchema: structuredClone(capability.inputSchema),
    outputSchema: structuredClone(capability.outputSchema),
    ...(capability.sideEffect === 'mutating'
      ? {
          rollbackHint: `No automatic compensation is known for ${capability.target}: review what it changed and undo it by hand.`,
        }
      : {}),
    ...(kind === 'human'
      ? { approval: { question: clip(objective, 2000), timeoutSeconds: DIRECT_APPROVAL_TIMEOUT_SECONDS } }
      : {}),
    status: 'pending',
    result: null,
    error: null,
  };
  return { schemaVersion: PLAN_SCHEMA_VERSION, revision: 1, objective, steps: [step] };
}
