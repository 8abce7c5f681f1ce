/**
 * What a model-backed agent is told: a brief built from the step (title, description, success criteria), the
 * run's objective, the evaluated input and the upstream outputs, and the one tool it must answer with,
 * `submit_result`, whose input schema wraps the capability's outputSchema with a self-reported confidence.
 */
import type { CapabilityCall } from '../ports/capabilities.ts';

export const SUBMIT_RESULT_TOOL = 'submit_result';

/** Upper bounds that keep one step's prompt reasonable whatever the upstream steps produced. */
export const BRIEF_LIMITS = { inputChars: 40_000, upstreamCharsEach: 30_000, upstreamCharsTotal: 120_000 } as const;

const AGENT_ROLE = [
  'You are an agent executing one step of a larger plan run by an orchestrator.',
  'Do exactly the task the step describes, using only the input and the upstream results you are given.',
];
const AGENT_HONESTY =
  'Do not invent sources or facts that are not in the material; lower your confidence when the material is thin.';
const RESULT_FIELDS =
  'put the step\'s result in "output" (it must match the schema) and in "confidence" your honest estimate, from 0 ' +
  'to 1, that the output meets the success criteria.';

/** For models that answer by calling the forced tool (Bedrock). */
export const AGENT_SYSTEM_PROMPT = [
  ...AGENT_ROLE,
  `Answer by calling the tool ${SUBMIT_RESULT_TOOL} exactly once: ${RESULT_FIELDS}`,
  AGENT_HONESTY,
].join(' ');

/** For models whose reply is constrained to the `submit_result` JSON Schema (OpenAI-compatible endpoints). */
export const AGENT_SYSTEM_PROMPT_JSON = [
  ...AGENT_ROLE,
  `Answer with one JSON object as your whole reply, no text and no code fence around it: ${RESULT_FIELDS}`,
  AGENT_HONESTY,
].join(' ');

function jsonBlock(value: unknown, limit: number): string {
  const text = JSON.stringify(value, null, 2) ?? 'null';
  const shown = text.length > limit ? `${text.slice(0, limit)}\n… (${text.length - limit} more characters cut)` : text;
  return `\`\`\`json\n${shown}\n\`\`\``;
}

/** The user message of the brief (markdown). */
export function agentBrief(call: CapabilityCall, delivery: 'tool' | 'json' = 'tool'): string {
  const { step } = call;
  const sections: string[] = [`# Objective of the run\n${call.objective}`, `# Your step: ${step.title}`];
  if (step.description) sections.push(step.description);
  if (step.successCriteria) {
    const assert = step.successCriteria.assert ? `\n(checked by: \`${step.successCriteria.assert}\`)` : '';
    sections.push(`# Success criteria\n${step.successCriteria.description}${assert}`);
  }
  sections.push(`# Capability\n${call.target}: ${call.capability.description}`);
  sections.push(`# Input\n${jsonBlock(call.input, BRIEF_LIMITS.inputChars)}`);
  const upstream = Object.entries(call.upstreamOutputs);
  if (upstream.length > 0) {
    let budget: number = BRIEF_LIMITS.upstreamCharsTotal;
    const parts = upstream.map(([stepId, output]) => {
      const limit = Math.max(0, Math.min(BRIEF_LIMITS.upstreamCharsEach, budget));
      const block = jsonBlock(output, limit);
      budget -= Math.min(block.length, limit);
      return `## ${stepId}\n${block}`;
    });
    sections.push(`# Results of the upstream steps\n${parts.join('\n\n')}`);
  }
  sections.push(delivery === 'tool' ? `Call ${SUBMIT_RESULT_TOOL} now.` : 'Reply with the JSON object now.');
  return sections.join('\n\n');
}

// Keywords whose values are data, not schemas: a "$ref" key inside them is not a reference.
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples']);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Moves a schema under `#/properties/output`: local JSON Pointer references are rebased to keep resolving. */
function rebase(node: unknown, prefix: string): unknown {
  if (Array.isArray(node)) return node.map((item) => rebase(item, prefix));
  if (!isRecord(node)) return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (DATA_KEYWORDS.has(key)) copy[key] = value;
    else if ((key === '$ref' || key === '$dynamicRef') && typeof value === 'string' && /^#(\/|$)/.test(value))
      copy[key] = `${prefix}${value.slice(1)}`;
    else copy[key] = rebase(value, prefix);
  }
  return copy;
}

/** The input schema of `submit_result`: `{ output: <outputSchema>, confidence: 0..1 }`, both required. */
export function submitResultSchema(outputSchema: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { $schema: _dialect, $id: _id, ...rest } = outputSchema;
  return {
    type: 'object',
    additionalProperties: false,
    required: ['output', 'confidence'],
    properties: {
      output: rebase(rest, '#/properties/output'),
      confidence: {
        type: 'number',
        minimum: 0,
        maximum: 1,
        description: 'How likely the output meets the success criteria, from 0 to 1.',
      },
    },
  };
}
