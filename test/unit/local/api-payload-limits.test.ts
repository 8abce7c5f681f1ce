import { describe, expect, it } from 'vitest';
import { withLambdaPayloadLimits } from '../../../infra/local/api-payload-limits.ts';
import { AWS_LIMITS } from '../../../infra/local/aws-limits.ts';

const MB = 1024 * 1024;

function app(answer: (request: Request) => Response | Promise<Response>) {
  const seen: Request[] = [];
  const fetch = withLambdaPayloadLimits(async (request) => {
    seen.push(request);
    return answer(request);
  });
  return { fetch, seen };
}

describe('withLambdaPayloadLimits', () => {
  it('answers a bare 500 when the handler’s response is over 6 MB, as API Gateway does', async () => {
    const { fetch } = app(() => Response.json({ big: 'x'.repeat(7 * MB) }));
    const response = await fetch(new Request('http://localhost/runs/r1'));
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ message: 'Internal Server Error' });
  });

  it('passes a response at the limit through with its status and headers', async () => {
    const body = 'y'.repeat(AWS_LIMITS.lambdaResponseBytes);
    const { fetch } = app(() => new Response(body, { status: 201, headers: { 'x-cairn': 'kept' } }));
    const response = await fetch(new Request('http://localhost/runs'));
    expect(response.status).toBe(201);
    expect(response.headers.get('x-cairn')).toBe('kept');
    expect(await response.text()).toBe(body);
  });

  it('refuses a request over 6 MB with 413 before the handler sees it', async () => {
    const { fetch, seen } = app(() => Response.json({}));
    const response = await fetch(
      new Request('http://localhost/runs', { method: 'POST', body: JSON.stringify({ pad: 'z'.repeat(6 * MB) }) }),
    );
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ message: 'Request Entity Too Large' });
    expect(seen).toEqual([]);
  });

  it('hands a request under the limit to the handler with its body intact', async () => {
    const { fetch } = app(async (request) => new Response(await request.text()));
    const body = JSON.stringify({ plan: 'p'.repeat(MB) });
    const response = await fetch(new Request('http://localhost/runs', { method: 'POST', body }));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(body);
  });
});
