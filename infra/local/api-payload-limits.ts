/**
 * The API's front door as on AWS: API Gateway hands each request to the API Lambda in one synchronous invocation,
 * so a request whose event is over Lambda's 6 MB never reaches the handler, and a response over 6 MB never reaches
 * the client. The HTTP API answers the first with 413 and the second (the invocation fails with
 * Function.ResponseSizeTooLarge, an integration failure) with a bare 500, whatever the handler meant to say. The
 * embedded server and its in-process requests go through the same door, so what would break deployed breaks here.
 */
import { isUtf8 } from 'node:buffer';
import { AWS_LIMITS } from './aws-limits.ts';
import { type LoopTurns, loopTurns } from './loop-turns.ts';

export type Fetch = (request: Request) => Response | Promise<Response>;

const gatewayAnswer = (status: number, message: string): Response =>
  new Response(JSON.stringify({ message }), { status, headers: { 'content-type': 'application/json' } });

/** What the invocation event carries besides the body: the headers and the path (a lower bound of the envelope). */
function envelopeBytes(request: Request): number {
  let bytes = Buffer.byteLength(request.url, 'utf8');
  for (const [name, value] of request.headers) bytes += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value);
  return bytes;
}

/**
 * The body's bytes, or undefined as soon as they pass `limit`: a body that cannot fit is not read to its end (a
 * 20 MB body read whole and decoded held the event loop for most of a second, bench:hostile). Between chunks the
 * read waits its turn of the loop (./loop-turns.ts) once the slice is spent: a salvo of 1 MB bodies arriving
 * together was otherwise read in one turn (650 ms in a bench:hostile profile on a busy host), and a body not read
 * yet stays in the socket.
 */
async function readUpTo(request: Request, limit: number, turns: LoopTurns): Promise<Buffer | undefined> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) return undefined;
  const reader = (request.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > limit) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
    const waiting = turns.turn();
    if (waiting !== undefined) await waiting;
  }
  return Buffer.concat(chunks, length);
}

/** Measures a request and its response as the Lambda invocation between API Gateway and the API would. */
const isEventStream = (response: Response): boolean =>
  response.headers.get('content-type')?.startsWith('text/event-stream') === true;

export function withLambdaPayloadLimits(
  fetch: Fetch,
  turns: LoopTurns = loopTurns,
): (request: Request) => Promise<Response> {
  return async (request) => {
    let forwarded = request;
    if (request.body !== null) {
      const room = AWS_LIMITS.lambdaRequestBytes - envelopeBytes(request);
      const body = await readUpTo(request, room, turns);
      // A body that is not UTF-8 text travels base64-encoded in the event: a third more.
      const eventBody =
        body === undefined ? Number.POSITIVE_INFINITY : isUtf8(body) ? body.length : Math.ceil(body.length / 3) * 4;
      if (body === undefined || eventBody > room) return gatewayAnswer(413, 'Request Entity Too Large');
      forwarded = new Request(request, { body });
    }
    const response = await fetch(forwarded);
    // A stream of server-sent events is the embedded server's own (deployed, the feed long-polls): passed on as it goes.
    if (response.body === null || isEventStream(response)) return response;
    const body = Buffer.from(await response.arrayBuffer());
    if (body.length > AWS_LIMITS.lambdaResponseBytes) return gatewayAnswer(500, 'Internal Server Error');
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
