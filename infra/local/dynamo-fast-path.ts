/**
 * The embedded DynamoDB client's fast path. Through the SDK, a store call on the in-process dynalite cost about twice
 * what dynalite itself spends on it: the SDK's middleware (endpoint rules, retry tokens, context spreads) and its
 * schema-driven serialization, for a request that dynalite parses back from JSON a moment later. The store adapter
 * already speaks the wire shape (`{ S: ... }` attribute values, no binary), so a command's input is handed to
 * dynalite's operation as data (wire-data.ts: the copy JSON's round trip would make, without the text), and its
 * answer is the output the SDK would return.
 *
 * Only the answers that need the SDK's reading take its path, and they take it without a second request: an error
 * (its exception class, `$fault`, `$metadata`, the retries it decides on) or a value in binary. The answer already
 * received is replayed, as the text dynalite's listener would have sent, to the SDK's pipeline as the first
 * attempt's answer (`x-cairn-replay`), so the exception the store adapter sees is the one the SDK makes, and a retry
 * the SDK decides on is a new request. A client to which anything adds middleware after boot (fault injection,
 * tests) is served by the SDK alone.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { NOT_WIRE, wireCopy, wireOutput } from './wire-data.ts';

/** The parts of the SDK's HttpRequest / HttpResponse this transport reads and writes. */
export interface SdkRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: unknown;
}
export interface SdkResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array;
}

/** dynalite's answer as its listener gave it: the body still text. */
export interface TextResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly text: string;
}

export const sdkResponse = (answer: TextResponse): SdkResponse => ({
  statusCode: answer.statusCode,
  headers: answer.headers,
  body: Buffer.from(answer.text, 'utf8'),
});

/** The request header that names a response to replay instead of asking dynalite again. */
export const REPLAY_HEADER = 'x-cairn-replay';

/** The operations the store adapter sends, by command class name. */
const OPERATIONS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchGetItem',
  'BatchWriteItem',
  'Query',
  'Scan',
]);

type Send = (command: unknown, ...rest: unknown[]) => Promise<unknown>;
type Observer = (commandName: string, input: unknown, output: unknown) => void;

/** dynalite's answer to a call, as data (dynalite-direct.ts). */
export interface CallAnswer {
  readonly statusCode: number;
  readonly data: Record<string, unknown>;
  readonly requestId: string;
}

export interface FastPathOptions {
  /** Answers one operation on a request (a fresh copy the callee may change), as data. */
  readonly call: (operation: string, data: Record<string, unknown>) => Promise<CallAnswer>;
  /** The answer as the text response the SDK reads (an error, or an answer holding binary values). */
  readonly text: (answer: CallAnswer) => TextResponse;
  /** Called for every command answered by the fast path, as the client's observer middleware is on the SDK's path. */
  readonly onCommand?: Observer | undefined;
}

export interface FastPath {
  /** Takes the response named by the request's replay header, if any (once). */
  takeReplay(request: SdkRequest): SdkResponse | undefined;
}

/** Serves `client.send` through the fast path; its answer is what the request handler asks for replays. */
export function installFastPath(client: DynamoDBClient, options: FastPathOptions): FastPath {
  const replays = new Map<string, SdkResponse>();
  const replayOf = new WeakMap<object, string>();
  let nextReplay = 0;
  // Names a replayed response on the request the SDK builds for the command's input.
  client.middlewareStack.add(
    (next, _context) => async (args) => {
      const id = replayOf.get(args.input as object);
      const request = args.request as SdkRequest | undefined;
      if (id !== undefined && request?.headers) {
        replayOf.delete(args.input as object);
        request.headers[REPLAY_HEADER] = id;
      }
      return next(args);
    },
    { step: 'build', name: 'cairnFastPathReplay' },
  );

  let fast = true;
  const stack = client.middlewareStack as unknown as Record<'add' | 'addRelativeTo' | 'use', (...a: unknown[]) => void>;
  for (const method of ['add', 'addRelativeTo', 'use'] as const) {
    const original = stack[method].bind(stack);
    stack[method] = (...args: unknown[]) => {
      fast = false;
      original(...args);
    };
  }

  const sdkSend = client.send.bind(client) as Send;
  const viaSdk = (command: { input: object }, response?: TextResponse): Promise<unknown> => {
    if (response !== undefined) {
      const id = String(nextReplay++);
      replays.set(id, sdkResponse(response));
      replayOf.set(command.input, id);
      // Taken by the first attempt; dropped here if the SDK failed before asking.
      return sdkSend(command).finally(() => replays.delete(id));
    }
    return sdkSend(command);
  };

  const send = async (command: { input: object }, name: string, operation: string): Promise<unknown> => {
    const data = wireCopy(command.input);
    if (data === NOT_WIRE) return viaSdk(command);
    const answer = await options.call(operation, data as Record<string, unknown>);
    if (answer.statusCode !== 200) return viaSdk(command, options.text(answer));
    const output = wireOutput(answer.data);
    if (output === NOT_WIRE) return viaSdk(command, options.text(answer));
    output.$metadata = { httpStatusCode: 200, requestId: answer.requestId, attempts: 1, totalRetryDelay: 0 };
    options.onCommand?.(name, command.input, output);
    return output;
  };

  (client as unknown as { send: Send }).send = (command, ...rest) => {
    const name = (command as object).constructor.name;
    const operation = name.endsWith('Command') ? name.slice(0, -'Command'.length) : '';
    if (!fast || rest.length > 0 || !OPERATIONS.has(operation)) return sdkSend(command, ...rest);
    return send(command as { input: object }, name, operation);
  };

  return {
    takeReplay(request) {
      const id = request.headers[REPLAY_HEADER];
      if (id === undefined) return undefined;
      const response = replays.get(id);
      replays.delete(id);
      return response;
    },
  };
}
