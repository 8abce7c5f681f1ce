/**
 * The brief a language model gets to plan: what a plan is, the rules the validator enforces, the catalog with its
 * contracts, and the limits. Pure text building, shared by every LLM adapter; the plan tool's input schema carries
 * the exact format, so the prompt explains the meaning and the rules the schema cannot express. A replan adds the
 * current plan, the executed history, the diagnosis and the scope rule (replan/prompt-sections.ts).
 */
import type { Capability } from '../plan/schema.ts';
import type { PlanModelRequest } from '../ports/plan-model.ts';
import { replanSections } from './replan/prompt-sections.ts';

export const PLAN_TOOL_NAME = 'submit_plan';
export const PLAN_TOOL_DESCRIPTION =
  'Submit the plan for the objective: one cairn plan (format v1) whose steps use only catalog targets. Call it ' +
  'exactly once, with the whole plan.';

/**
 * How the model hands the plan over: by calling the plan tool (Bedrock), or as the reply itself, one JSON object
 * constrained by a JSON Schema response format (OpenAI-compatible endpoints; see shared/adapters/openai).
 */
export type PlanDelivery = 'tool' | 'json';

const ANSWER_RULE: Readonly<Record<PlanDelivery, string>> = {
  tool: 'Answer by calling the submit_plan tool exactly once with one complete plan. Do not answer in text.',
  json:
    'Answer with one complete plan as your whole reply: a single JSON object in the required format, with no text ' +
    'and no code fence around it.',
};
const LAST_LINE: Readonly<Record<PlanDelivery, string>> = {
  tool: `Call ${PLAN_TOOL_NAME} with the plan.`,
  json: 'Reply with the plan as one JSON object.',
};

const RULES = [
  'schemaVersion is 1, revision is 1 (unless told otherwise below), objective is the objective exactly as given.',
  'Every step has a unique id (letters, digits, "_", ".", "-"; at most 64 characters), a short title, dependsOn ' +
    '(ids of steps it waits for) and a target that is exactly one catalog target.',
  "A step's inputSchema and outputSchema are copied verbatim from its target's catalog entry.",
  'Steps that do not depend on each other run in parallel: only add a dependency when a step needs another ' +
    "step's output or must happen after it. No cycles.",
  'To group steps, add a group step (target null, no schemas) and set parentId of its children to its id; ' +
    'depending on a group means depending on all of its children.',
  'input is a JSON value for the target\'s inputSchema. A string of the exact form "{% <JSONata> %}" is evaluated ' +
    'at run time with $objective and $outputs.<stepId> (quote ids with dots or dashes: $outputs.`research.acme`). ' +
    'An expression may only read steps the step (transitively) depends on.',
  'when (optional) is a "{% <JSONata> %}" condition; false at run time skips the step.',
  'successCriteria { description, assert?, outputSchema? } says what a good result is; assert is JSONata over ' +
    '$output, outputSchema a stricter JSON Schema for it. On a mutating or human: step, give successCriteria an ' +
    'assert or an outputSchema, or leave it out: a description alone is refused there.',
  'Agent steps may set confidenceThreshold (0..1): a result below it goes to human review.',
  'Every step whose target has sideEffect "mutating" needs a rollbackHint: how to compensate it.',
  'Every human: step needs approval { question, timeoutSeconds }: one bounded question.',
  'watches lists resource keys a step reads from outside; estimatedDurationSeconds helps scheduling.',
  'Never set status, result or error (or set them to "pending", null, null).',
  'rationale: say in a few sentences why you chose this decomposition and these targets (for a revision: what ' +
    'you changed and why); at most 2000 characters. It is kept with the plan and shown to people.',
];

const describeCapability = (c: Capability): string =>
  [
    `- ${c.target} (sideEffect: ${c.sideEffect})${c.alternatives?.length ? `; alternatives: ${c.alternatives.join(', ')}` : ''}`,
    `  ${c.description}`,
    `  inputSchema: ${JSON.stringify(c.inputSchema)}`,
    `  outputSchema: ${JSON.stringify(c.outputSchema)}`,
  ].join('\n');

export interface PlanPrompt {
  readonly system: string;
  readonly user: string;
}

export function buildPlanPrompt(request: PlanModelRequest, delivery: PlanDelivery = 'tool'): PlanPrompt {
  const { limits } = request;
  const system = [
    'You are the planner of cairn, an orchestrator that runs plans of steps durably. Decompose the objective into ' +
      'a plan: a DAG of steps, each bound to one capability of the catalog below (tool: deterministic code, agent: ' +
      'a model with a brief, human: a person answering one question). Prefer parallel branches that join in a ' +
      'later step, put a human gate before anything irreversible, and keep the plan as small as the objective allows.',
    '',
    'Rules (plans that break them are rejected, never repaired):',
    ...[ANSWER_RULE[delivery], ...RULES].map((rule) => `- ${rule}`),
    `- At most ${limits.maxSteps} steps (group steps included); at most ${limits.maxDepth} steps on any dependency path.`,
    '',
    'Catalog (the only targets you may use):',
    ...request.catalog.map(describeCapability),
  ].join('\n');

  const sections = [`Objective:\n${request.objective}`, ...replanSections(request)];
  sections.push(LAST_LINE[delivery]);
  return { system, user: sections.join('\n\n') };
}
