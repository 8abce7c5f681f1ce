/**
 * dynalite without a socket: the embedded stack's DynamoDB client keeps the real SDK (commands, middleware,
 * serialization, error mapping: everything the store adapter sees on AWS) and swaps only the transport, handing each
 * request to dynalite's own HTTP request listener in process. On a one-process stack that runs hundreds of store
 * calls per second, the HTTP round trip and SigV4 signing were most of each call's CPU; dynalite checks only that a
 * signature is present, so requests carry a fixed placeholder instead (nothing here ever reaches AWS). The store's
 * item commands skip the SDK's pipeline and dynalite's listener as well: the fast path (dynamo-fast-path.ts) hands
 * them to dynalite's operations as data (dynalite-direct.ts); an error is still read, and retried, by the SDK.
 *
 * Tests keep using the socket-based dynalite (shared/adapters/local/dynalite-server.ts), which exercises the full
 * HTTP path.
 */
import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { cacheDynaliteExpressions } from '../../shared/adapters/local/dynalite-expression-cache.ts';
import { sizeDynaliteItemsAsDynamoDb } from '../../shared/adapters/local/dynalite-item-size.ts';
import { createLocalTable } from '../../shared/adapters/local/dynalite-server.ts';
import { answerText, callDynalite, capturingStore } from './dynalite-direct.ts';
import {
  type CallAnswer,
  type FastPath,
  installFastPath,
  type SdkRequest,
  type SdkResponse,
  sdkResponse,
  type TextResponse,
} from './dynamo-fast-path.ts';
import { loopTurns } from './loop-turns.ts';

type DynaliteFactory = (options: {
  createTableMs: number;
  deleteTableMs: number;
  updateTableMs: number;
  path?: string;
}) => Server;
type RequestListener = (request: unknown, response: unknown) => void;

// dynalite is CommonJS and ships no types: load it with require and type the one function cairn uses.
const dynalite = createRequire(import.meta.url)('dynalite') as DynaliteFactory;
cacheDynaliteExpressions();

/** The signature dynalite looks for (it parses the header's parts; it never verifies them). */
const PLACEHOLDER_AUTHORIZATION =
  'AWS4-HMAC-SHA256 Credential=local/20000101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=local';
const PLACEHOLDER_DATE = '20000101T000000Z';
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
/** Middleware that only adds headers dynalite never reads. */
const UNREAD_HEADER_MIDDLEWARE = ['getUserAgentMiddleware', 'recursionDetectionMiddleware'] as const;

/** dynalite's request size bound, checked on what it receives: text below a third of it is within it in bytes too. */
const TEXT_BODY_LIMIT = Math.floor((16 * 1024 * 1024) / 3);

/** The body as dynalite's listener takes it: a short text as it is (no round trip through bytes), else its bytes. */
function bodyData(body: unknown): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body.length < TEXT_BODY_LIMIT ? body : Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('the in-process DynamoDB transport takes string or byte bodies only');
}

/** Asks dynalite's request listener (fake request and response objects); its answer is kept as text. */
function answerWith(listener: RequestListener) {
  return (request: SdkRequest): Promise<TextResponse> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = {};
      for (const name in request.headers) headers[name.toLowerCase()] = request.headers[name] as string;
      const incoming = Object.assign(new EventEmitter(), { method: request.method, url: request.path, headers });
      const answer: Record<string, string> = {};
      const outgoing = {
        statusCode: 200,
        contentType: '',
        setHeader(name: string, value: unknown) {
          answer[name.toLowerCase()] = String(value);
        },
        end(text?: string) {
          resolve({ statusCode: outgoing.statusCode, headers: answer, text: text ?? '' });
        },
      };
      try {
        listener(incoming, outgoing);
        const data = bodyData(request.body);
        if (data !== undefined) incoming.emit('data', data);
        incoming.emit('end');
      } catch (error) {
        reject(error);
      }
    });
}

/**
 * An SDK request handler that answers through dynalite, or with the response the fast path already received for the
 * request (`replayed`).
 */
function inProcessHandler(
  answer: (request: SdkRequest) => Promise<TextResponse>,
  replayed: (request: SdkRequest) => SdkResponse | undefined,
) {
  return {
    metadata: { handlerProtocol: 'http/1.1' },
    async handle(request: SdkRequest): Promise<{ response: SdkResponse }> {
      const replay = replayed(request);
      if (replay !== undefined) return { response: replay };
      return { response: sdkResponse(await answer(request)) };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
  };
}

/** SigV4 replaced by the placeholder signature: the request is otherwise exactly what the SDK built. */
const placeholderSigner = {
  async sign(request: SdkRequest): Promise<SdkRequest> {
    request.headers.authorization = PLACEHOLDER_AUTHORIZATION;
    request.headers['x-amz-date'] = PLACEHOLDER_DATE;
    return request;
  },
};

export interface InProcessDynamo {
  readonly client: DynamoDBClient;
  stop(): Promise<void>;
}

export interface InProcessDynamoOptions {
  readonly tableName: string;
  /** LevelDB directory (the store survives the process); in memory when absent. */
  readonly path?: string;
  /** Called for every command the client sent, with its input and (unless it failed) its output: instrumentation. */
  readonly onCommand?: (commandName: string, input: unknown, output: unknown) => void;
  /**
   * Wraps every call dynalite answers, on the fast path and the SDK's path alike, as the service would sit around
   * the table (quotas/dynamo-partitions.ts: per-partition throughput). An answer it gives is read by the SDK as
   * DynamoDB's (its exception, its retries).
   */
  readonly aroundCalls?: (call: DynaliteCall) => DynaliteCall;
}

/** One operation on the table, its request and answer as data (the wire JSON). */
export type DynaliteCall = (operation: string, data: Record<string, unknown>) => Promise<CallAnswer>;

const headerOf = (headers: Record<string, string>, name: string): string | undefined => {
  for (const key in headers) if (key.toLowerCase() === name) return headers[key];
  return undefined;
};

/** A request on the SDK's path, answered through `around` (its operation and body read as data, then sent on). */
async function answerAround(
  around: (call: DynaliteCall) => DynaliteCall,
  answer: (request: SdkRequest) => Promise<TextResponse>,
  request: SdkRequest,
): Promise<TextResponse> {
  const operation = headerOf(request.headers, 'x-amz-target')?.split('.').pop();
  if (operation === undefined || request.body === undefined || request.body === null) return answer(request);
  const body = request.body;
  // The SDK's body is a Uint8Array (a subclass whose valueOf is text: Buffer.from(body) would warn); read its bytes.
  const bytes = body as Uint8Array;
  const text =
    typeof body === 'string' ? body : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  const send: DynaliteCall = async (_operation, data) => {
    const sent = JSON.stringify(data);
    const headers = { ...request.headers };
    for (const name in headers) if (name.toLowerCase() === 'content-length') delete headers[name];
    headers['content-length'] = String(Buffer.byteLength(sent, 'utf8'));
    const answered = await answer({ ...request, headers, body: sent });
    return {
      statusCode: answered.statusCode,
      data: answered.text === '' ? {} : (JSON.parse(answered.text) as Record<string, unknown>),
      requestId: headerOf(answered.headers, 'x-amzn-requestid') ?? '',
    };
  };
  return answerText(await around(send)(operation, JSON.parse(text) as Record<string, unknown>));
}

/** A dynalite (in memory, or on LevelDB at `path`) with cairn's table (`tableName`, see table-layout.ts) and an SDK client wired to it. */
export async function startInProcessDynamo(options: InProcessDynamoOptions): Promise<InProcessDynamo> {
  // DynamoDB's 400 KB item limit in UTF-8 bytes, as on AWS (dynalite counts UTF-16 code units).
  sizeDynaliteItemsAsDynamoDb();
  const { made: server, store } = capturingStore(() =>
    dynalite({
      createTableMs: 0,
      deleteTableMs: 0,
      updateTableMs: 0,
      ...(options.path === undefined ? {} : { path: options.path }),
    }),
  );
  const listener = server.listeners('request')[0] as RequestListener | undefined;
  if (!listener) throw new Error('dynalite exposes no request listener');
  if (options.path !== undefined) {
    // dynalite closes its LevelDB (and frees the directory's LOCK) only after its HTTP server closed, and a server
    // that never listened fails to close: on disk it listens on a loopback port nobody is told about.
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  }
  // The transport and signer implement the SDK's interfaces structurally (see SdkRequest / SdkResponse).
  let fastPath: FastPath | undefined;
  // Every store call lets the loop poll once the current slice is spent (loop-turns.ts).
  const answerListener = answerWith(listener);
  const { aroundCalls } = options;
  const answerNow =
    aroundCalls === undefined
      ? answerListener
      : (request: SdkRequest) => answerAround(aroundCalls, answerListener, request);
  const answer = (request: SdkRequest): Promise<TextResponse> => {
    const waiting = loopTurns.turn();
    return waiting === undefined ? answerNow(request) : waiting.then(() => answerNow(request));
  };
  const requestHandler = inProcessHandler(answer, (request) => fastPath?.takeReplay(request));
  const config = {
    endpoint: 'http://dynalite.in-process',
    region: 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 3,
    requestHandler,
    // Resolve each command's middleware stack once instead of on every call (the stack is complete before the
    // first call: see `onCommand`).
    cacheMiddleware: true,
    httpAuthSchemes: [
      {
        schemeId: 'aws.auth#sigv4',
        identityProvider: () => async () => LOCAL_CREDENTIALS,
        signer: placeholderSigner,
      },
    ],
  } as unknown as DynamoDBClientConfig;
  const client = new DynamoDBClient(config);
  // Headers for AWS's side only (who is calling, a Lambda's trace id): dynalite reads neither, and building the
  // user agent was the most expensive middleware left on each call (~3 % of a zero-work run's CPU).
  for (const name of UNREAD_HEADER_MIDDLEWARE) client.middlewareStack.remove(name);
  const { onCommand } = options;
  if (onCommand)
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const name = String(context.commandName);
        try {
          const result = await next(args);
          onCommand(name, args.input, result.output);
          return result;
        } catch (error) {
          onCommand(name, args.input, undefined);
          throw error;
        }
      },
      { step: 'initialize', name: 'cairnCommandObserver' },
    );
  const direct: DynaliteCall = (operation, data) => callDynalite(store, operation, data);
  const calls = aroundCalls === undefined ? direct : aroundCalls(direct);
  const call = (operation: string, data: Record<string, unknown>) => {
    const waiting = loopTurns.turn();
    return waiting === undefined ? calls(operation, data) : waiting.then(() => calls(operation, data));
  };
  fastPath = installFastPath(client, { call, text: answerText, onCommand });
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    // dynalite closes its store once its server has closed (and waits for the operations in flight).
    stopped ??= new Promise<void>((resolve) => {
      client.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
    return stopped;
  };
  try {
    await createLocalTable(client, options.tableName);
  } catch (error) {
    await stop();
    throw error;
  }
  return { client, stop };
}
