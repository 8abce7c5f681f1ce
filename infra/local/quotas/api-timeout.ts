/**
 * API Gateway's time limit on the embedded API: a request not answered within it gets what the deployed stack
 * answers. Deployed, the API Lambda's timeout (29 s) ends the invocation before the HTTP API's own integration
 * timeout (30 s), and the HTTP API answers a function that timed out with a bare 500 (an integration timeout would
 * be a 503, and a REST API's a 504: neither is reached). The handler here goes on in the background (a Lambda
 * would have been stopped), but the client has its answer, and the work it started has to be findable without it.
 */
import type { Fetch } from '../api-payload-limits.ts';
import type { ThrottleCounter } from './throttle-counter.ts';

export const TIMED_OUT_BODY = { message: 'Internal Server Error' } as const;
export const TIMED_OUT_STATUS = 500;

export function withApiTimeout(fetch: Fetch, timeoutMs: number, counter: ThrottleCounter): Fetch {
  return (request) =>
    new Promise<Response>((resolve, reject) => {
      const timer = setTimeout(() => {
        counter.count('api.timeout');
        resolve(
          new Response(JSON.stringify(TIMED_OUT_BODY), {
            status: TIMED_OUT_STATUS,
            headers: { 'content-type': 'application/json' },
          }),
        );
      }, timeoutMs);
      Promise.resolve()
        .then(() => fetch(request))
        .then(
          (response) => {
            clearTimeout(timer);
            resolve(response);
          },
          (error: unknown) => {
            clearTimeout(timer);
            reject(error);
          },
        );
    });
}
