/**
 * The API's front door as on AWS: API Gateway hands each request to the API Lambda in one synchronous invocation,
 * so a request whose event is over Lambda's 6 MB never reaches the handler, and a response over 6 MB never reaches
 * the client. The HTTP API answers the first with 413 and the second (the invocation fails with
 * Function.ResponseSizeTooLarge, an integration failure) with a bare 500, whatever the handler meant to say. The
 * embedded server and its in-process requests go through the same door, so what would break deployed breaks here.
 */
import { AWS_LIMITS } from './aws-limits.ts';

export type Fetch = (request: Request) => Response | Promise<Response>;

const gatewayAnswer = (status: number, message: string): Response =>
  new Response(JSON.stringify({ message }), { status, headers: { 'content-type': 'application/json' } });

/** What the invocation event carries besides the body: the headers and the path (a lower bound of the envelope). */
function envelopeBytes(request: Request): number {
  let bytes = Buffer.byteLength(request.url, 'utf8');
  for (const [name, value] of request.headers) bytes += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value);
  return bytes;
}

/** Measures a request and its response as the Lambda invocation between API Gateway and the API would. */
export function withLambdaPayloadLimits(fetch: Fetch): (request: Request) => Promise<Response> {
  return async (request) => {
    let forwarded = request;
    if (request.body !== null) {
      const body = Buffer.from(await request.arrayBuffer());
      // A body that is not UTF-8 text travels base64-encoded in the event: a third more.
      const eventBody = body.toString('utf8').includes('\uFFFD') ? Math.ceil(body.length / 3) * 4 : body.length;
      if (eventBody + envelopeBytes(request) > AWS_LIMITS.lambdaRequestBytes)
        return gatewayAnswer(413, 'Request Entity Too Large');
      forwarded = new Request(request, { body });
    }
    const response = await fetch(forwarded);
    if (response.body === null) return response;
    const body = Buffer.from(await response.arrayBuffer());
    if (body.length > AWS_LIMITS.lambdaResponseBytes) return gatewayAnswer(500, 'Internal Server Error');
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
