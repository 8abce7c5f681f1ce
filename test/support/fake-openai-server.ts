/**
 * A fake OpenAI-compatible server (node:http, in process, 127.0.0.1, port 0) that speaks enough of the Chat
 * Completions protocol for the openai adapters and end-to-end tests: `POST /v1/chat/completions` answers what
 * `reply(request)` says — a completion, an HTTP error, a body that is not JSON, or no answer at all (a hang, for
 * timeouts) — and `GET /v1/models` lists the model. Every request is recorded with its parsed body.
 *
 *   const fake = await startFakeOpenAI({
 *     reply: (request) => (formatName(request) === 'submit_plan' ? completion(plan) : completion({ output, confidence: 0.9 })),
 *   });
 *   // baseUrl: fake.baseUrl (…/v1), model: anything
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The Chat Completions request as the client sent it (the fields cairn sends; the rest kept as given). */
export interface ChatRequestBody {
  readonly model: string;
  readonly messages: readonly { readonly role: string; readonly content: string }[];
  readonly max_tokens?: number;
  readonly temperature?: number;
  readonly response_format?: {
    readonly type: string;
    readonly json_schema?: { readonly name: string; readonly schema?: Record<string, unknown> };
  };
  readonly [key: string]: unknown;
}

export interface FakeChatRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: ChatRequestBody;
}

export interface CompletionChoice {
  /** A string is sent as is; anything else is sent as its JSON text. */
  readonly content?: unknown;
  readonly finishReason?: string | null;
  readonly refusal?: string;
  readonly toolCalls?: readonly unknown[];
}

/** What the fake answers one request with. */
export type FakeReply =
  | {
      readonly kind: 'completion';
      readonly choices: readonly CompletionChoice[];
      readonly usage?: { readonly promptTokens: number; readonly completionTokens: number } | null;
    }
  | { readonly kind: 'status'; readonly status: number; readonly message?: string; readonly type?: string }
  | { readonly kind: 'raw'; readonly status?: number; readonly body: string; readonly contentType?: string }
  | { readonly kind: 'hang' };

export type ReplyFn = (request: FakeChatRequest) => FakeReply | Promise<FakeReply>;

export const DEFAULT_USAGE = { promptTokens: 120, completionTokens: 30 } as const;

/** One choice with `content` (an object is sent as JSON text), finished with `stop`, and a usage. */
export function completion(
  content: unknown,
  options: { finishReason?: string | null; usage?: { promptTokens: number; completionTokens: number } | null } = {},
): FakeReply {
  return {
    kind: 'completion',
    choices: [{ content, finishReason: options.finishReason === undefined ? 'stop' : options.finishReason }],
    usage: options.usage === undefined ? DEFAULT_USAGE : options.usage,
  };
}

/** Several choices (the protocol's several candidates). */
export const choices = (...contents: unknown[]): FakeReply => ({
  kind: 'completion',
  choices: contents.map((content) => ({ content, finishReason: 'stop' })),
  usage: DEFAULT_USAGE,
});

/** An HTTP error with an OpenAI-style error body. */
export const status = (code: number, message = `fake error ${code}`): FakeReply => ({
  kind: 'status',
  status: code,
  message,
});

/** A body sent as is (malformed JSON, HTML from a proxy). */
export const raw = (body: string, contentType = 'application/json'): FakeReply => ({ kind: 'raw', body, contentType });

/** No answer until the server closes: the client's timeout fires. */
export const hang = (): FakeReply => ({ kind: 'hang' });

/** The name of the response format a request asked for: `submit_plan` (planner) or `submit_result` (agent). */
export const formatName = (request: FakeChatRequest): string | undefined =>
  request.body.response_format?.json_schema?.name;

/** The agent brief's evaluated input (its `# Input` JSON block), as the step sent it. */
export function briefInput(request: FakeChatRequest): unknown {
  const brief = request.body.messages.find((m) => m.role === 'user')?.content ?? '';
  const block = /# Input\n```json\n([\s\S]*?)\n```/.exec(brief)?.[1];
  return block === undefined ? undefined : (JSON.parse(block) as unknown);
}

export interface FakeOpenAI {
  /** The API base URL to configure (`http://127.0.0.1:<port>/v1`). */
  readonly baseUrl: string;
  /** Every chat completion request, in arrival order. */
  readonly requests: FakeChatRequest[];
  /** Changes how later requests are answered. */
  setReply(reply: ReplyFn): void;
  close(): Promise<void>;
}

function completionBody(reply: Extract<FakeReply, { kind: 'completion' }>, model: string, n: number) {
  return {
    id: `chatcmpl-fake-${n}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: reply.choices.map((choice, index) => ({
      index,
      finish_reason: choice.finishReason ?? null,
      logprobs: null,
      message: {
        role: 'assistant',
        content:
          choice.content === undefined || choice.content === null
            ? null
            : typeof choice.content === 'string'
              ? choice.content
              : JSON.stringify(choice.content),
        ...(choice.refusal === undefined ? {} : { refusal: choice.refusal }),
        ...(choice.toolCalls === undefined ? {} : { tool_calls: choice.toolCalls }),
      },
    })),
    ...(reply.usage === null || reply.usage === undefined
      ? {}
      : {
          usage: {
            prompt_tokens: reply.usage.promptTokens,
            completion_tokens: reply.usage.completionTokens,
            total_tokens: reply.usage.promptTokens + reply.usage.completionTokens,
          },
        }),
  };
}

function send(response: ServerResponse, code: number, body: unknown, contentType = 'application/json'): void {
  response.writeHead(code, { 'content-type': contentType });
  response.end(typeof body === 'string' ? body : JSON.stringify(body));
}

export async function startFakeOpenAI(options: { readonly reply: ReplyFn }): Promise<FakeOpenAI> {
  const requests: FakeChatRequest[] = [];
  let reply = options.reply;
  const answer = async (req: IncomingMessage, text: string, response: ServerResponse): Promise<void> => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (req.method === 'GET' && path === '/v1/models') {
      send(response, 200, { object: 'list', data: [{ id: 'fake-model', object: 'model', owned_by: 'cairn-tests' }] });
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      send(response, 404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' } });
      return;
    }
    const request: FakeChatRequest = {
      method: req.method,
      path,
      headers: req.headers,
      body: JSON.parse(text) as ChatRequestBody,
    };
    requests.push(request);
    const planned = await reply(request);
    switch (planned.kind) {
      case 'completion':
        send(response, 200, completionBody(planned, request.body.model, requests.length));
        return;
      case 'status':
        send(response, planned.status, {
          error: { message: planned.message ?? 'fake error', type: planned.type ?? 'server_error', code: null },
        });
        return;
      case 'raw':
        send(response, planned.status ?? 200, planned.body, planned.contentType ?? 'application/json');
        return;
      case 'hang':
        // The socket stays open; close() (closeAllConnections) ends it.
        return;
    }
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      answer(req, Buffer.concat(chunks).toString('utf8'), res).catch((error: unknown) => {
        if (!res.headersSent) send(res, 500, { error: { message: String(error), type: 'fake_server_bug' } });
        else res.destroy();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    setReply(next) {
      reply = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
