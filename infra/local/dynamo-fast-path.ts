/**
 * The embedded DynamoDB client's fast path. Through the SDK, a store call on the in-process dynalite cost about twice
 * what dynalite itself spends on it: the SDK's middleware (endpoint rules, retry tokens, context spreads) and its
 * schema-driven serialization, for a request that dynalite parses back from JSON a moment later. The store adapter
 * already speaks the wire shape (`{ S: ... }` attribute values, no binary), so a command's input serialized with
 * JSON.stringify is the body the SDK would build, and dynalite's answer parsed with JSON.parse is the output the SDK
 * would return.
 *
 * Only the answers that need the SDK's reading take its path, and they take it without a second request: an error
 * (its exception class, `$fault`, `$metadata`, the retries it decides on) or a value in binary. The response already
 * received is replayed to the SDK's pipeline as the first attempt's answer (`x-cairn-replay`), so the exception the
 * store adapter sees is the one the SDK makes, and a retry the SDK decides on is a new request. A client to which
 * anything adds middleware after boot (fault injection, tests) is served by the SDK alone.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

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

/** A binary attribute value (`B`, `BS`) as a JSON key: the SDK turns base64 text into bytes and back. */
const BINARY = /"BS?":/;

type Send = (command: unknown, ...rest: unknown[]) => Promise<unknown>;
type Observer = (commandName: string, input: unknown, output: unknown) => void;

export interface FastPathOptions {
  /** Answers one request (dynalite's listener, in process). */
  readonly answer: (request: SdkRequest) => Promise<TextResponse>;
  /** The headers every request carries (content type and placeholder signature). */
  readonly headers: Readonly<Record<string, string>>;
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
    const body = JSON.stringify(command.input);
    if (BINARY.test(body)) return viaSdk(command);
    const response = await options.answer({
      method: 'POST',
      path: '/',
      headers: { ...options.headers, 'x-amz-target': `DynamoDB_20120810.${operation}` },
      body,
    });
    if (response.statusCode !== 200) return viaSdk(command, response);
    if (BINARY.test(response.text)) return viaSdk(command, response);
    const output = JSON.parse(response.text) as Record<string, unknown>;
    output.$metadata = {
      httpStatusCode: 200,
      requestId: response.headers['x-amzn-requestid'],
      attempts: 1,
      totalRetryDelay: 0,
    };
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
