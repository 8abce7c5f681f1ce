import { describe, expect, it } from 'vitest';
import { withLambdaPayloadLimits } from '../../../infra/local/api-payload-limits.ts';
import { AWS_LIMITS } from '../../../infra/local/aws-limits.ts';
import { createLoopTurns } from '../../../infra/local/loop-turns.ts';

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

  it('waits for a turn of the loop between the chunks of a body once the slice is spent, and keeps the body whole', async () => {
    // A slice of 0 ms: every chunk waits, as each would once a salvo of bodies has spent the slice.
    const turns = createLoopTurns({ sliceMs: 0 });
    const seen: string[] = [];
    const fetch = withLambdaPayloadLimits(async (request) => {
      seen.push(await request.text());
      return Response.json({});
    }, turns);
    const parts = ['{"plan":', '"', 'x'.repeat(64 * 1024), '"', '}'];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of parts) controller.enqueue(new TextEncoder().encode(part));
        controller.close();
      },
    });
    const response = await fetch(new Request('http://localhost/runs', { method: 'POST', body, duplex: 'half' }));
    expect(response.status).toBe(200);
    expect(seen).toEqual([parts.join('')]);
    expect(turns.waits).toBe(parts.length);
  });
});
