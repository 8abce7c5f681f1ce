/**
 * A Chat Completions reply read as cairn's structured answer: exactly one choice, finished on its own (not cut off,
 * not filtered), no tool calls, and a content that is one JSON value. The request asks for that JSON with a
 * `response_format` of type `json_schema` (see openai-plan-model.ts for why not a forced tool call).
 *
 * The body is untrusted (a gateway, a proxy, a half-compatible server): it is checked here, at the edge, and every
 * way it can fail has its own problem name, which the plan model and the agent turn into their own codes.
 */
import { z } from 'zod';
import { usageOf } from '../../engine/usage.ts';
import type { ModelUsage } from '../../ports/capabilities.ts';

/** The part of a chat completion cairn reads; servers add fields of their own, which are ignored. */
const chatCompletionSchema = z.object({
  id: z.string().optional(),
  model: z.string().optional(),
  choices: z.array(
    z.object({
      finish_reason: z.string().nullish(),
      message: z.object({
        content: z.string().nullish(),
        refusal: z.string().nullish(),
        tool_calls: z.array(z.unknown()).nullish(),
      }),
    }),
  ),
  usage: z.object({ prompt_tokens: z.unknown(), completion_tokens: z.unknown() }).partial().nullish(),
});

export type ReplyProblem =
  /** The body is not a chat completion at all. */
  | 'malformed_body'
  /** No choice, or a choice with no content. */
  | 'empty'
  /** More than one choice: more than one candidate answer. */
  | 'several_choices'
  /** finish_reason `length`: cut off at max_tokens or the context window. */
  | 'truncated'
  /** finish_reason `content_filter`, or a refusal instead of content. */
  | 'refused'
  /** The model called a tool (none was offered: the answer must be the content). */
  | 'tool_call'
  /** Prose instead of JSON. */
  | 'text_only'
  /** Something that looks like JSON and does not parse (often a cut-off answer the server did not flag). */
  | 'malformed_json';

export type JsonReply =
  | {
      readonly ok: true;
      readonly value: unknown;
      readonly finishReason: string | null;
      readonly usage?: ModelUsage;
    }
  | {
      readonly ok: false;
      readonly problem: ReplyProblem;
      readonly why: string;
      readonly finishReason: string | null;
      readonly usage?: ModelUsage;
    };

const NOTE_CHARS = 500;

/** The content without one code fence around it: some servers fence JSON even when told not to. */
function unfenced(content: string): string {
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/i.exec(content);
  return fenced?.[1] === undefined ? content : fenced[1].trim();
}

/** Reads a chat completion body as one JSON answer, or says what is wrong with it. */
export function readJsonReply(body: unknown): JsonReply {
  const parsed = chatCompletionSchema.safeParse(body);
  if (!parsed.success) {
    const what = typeof body === 'string' ? `text (${JSON.stringify(body.slice(0, 80))})` : typeof body;
    return {
      ok: false,
      problem: 'malformed_body',
      why: `the reply is not a chat completion: ${what}; ${parsed.error.issues[0]?.message ?? ''}`.trim(),
      finishReason: null,
    };
  }
  const { choices, usage: counts } = parsed.data;
  const usage = usageOf(counts?.prompt_tokens, counts?.completion_tokens);
  const withUsage = usage === undefined ? {} : { usage };
  const fail = (problem: ReplyProblem, why: string, finishReason: string | null): JsonReply => ({
    ok: false,
    problem,
    why,
    finishReason,
    ...withUsage,
  });
  if (choices.length === 0) return fail('empty', 'the reply has no choice', null);
  if (choices.length > 1)
    return fail('several_choices', `the reply has ${choices.length} choices; exactly one is accepted`, null);
  const [choice] = choices as [(typeof choices)[number]];
  const finishReason = choice.finish_reason ?? null;
  const { content, refusal, tool_calls: toolCalls } = choice.message;
  if (finishReason === 'length')
    return fail('truncated', 'the answer was cut off (finish_reason "length"), so it is incomplete', finishReason);
  if (finishReason === 'content_filter')
    return fail('refused', 'a content filter stopped the answer (finish_reason "content_filter")', finishReason);
  if (typeof refusal === 'string' && refusal.trim() !== '')
    return fail('refused', `the model refused: ${refusal.slice(0, NOTE_CHARS)}`, finishReason);
  if (toolCalls && toolCalls.length > 0)
    return fail('tool_call', `the model called ${toolCalls.length} tool(s) instead of answering in JSON`, finishReason);
  const text = unfenced((content ?? '').trim());
  if (text === '') return fail('empty', 'the reply has no content', finishReason);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const looksJson = text.startsWith('{') || text.startsWith('[');
    return looksJson
      ? fail('malformed_json', `the reply is not valid JSON: ${(error as Error).message}`, finishReason)
      : fail('text_only', `the model answered in text, not JSON: ${JSON.stringify(text.slice(0, 80))}`, finishReason);
  }
  return { ok: true, value, finishReason, ...withUsage };
}
