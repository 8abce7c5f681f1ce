import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { httpCapability } from '../../../shared/adapters/http-capability.ts';
import { aCall, caught, codeOf } from '../../support/capability-call.ts';
import { json, refusedUrl, startHttpServer, type TestHttpServer } from '../../support/http-server.ts';

describe('httpCapability', () => {
  let server: TestHttpServer;
  const binding = (timeoutMs = 2000) =>
    httpCapability({ url: server.url, timeoutMs, headers: { authorization: 'Bearer s3cret' }, internal: true });

  beforeAll(async () => {
    server = await startHttpServer();
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
  });

  it('POSTs the documented JSON request with the idempotency key and configured headers', async () => {
    server.respondWith(json(200, { value: 'hello' }));

    const result = await binding().invoke(aCall());

    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/capability');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['idempotency-key']).toBe('run-1#step-1#1');
    expect(request?.headers.authorization).toBe('Bearer s3cret');
    expect(JSON.parse(request?.body ?? '')).toEqual({
      target: 'tool:conformance.echo',
      input: { value: 'hello' },
      context: {
        runId: 'run-1',
        stepId: 'step-1',
        generation: 1,
        attempt: 1,
        idempotencyKey: 'run-1#step-1#1',
        objective: 'Test the bindings',
        step: { title: 'Echo a value', description: 'Send the value back.' },
        upstreamOutputs: {},
      },
    });
    expect(result).toEqual({ output: { value: 'hello' }, evidence: { binding: 'http', url: server.url, status: 200 } });
  });

  it('accepts any 2xx and unwraps the { output, confidence } envelope', async () => {
    server.respondWith(json(201, { output: ['a', 'b'], confidence: 0.9 }));

    const result = await binding().invoke(aCall());

    expect(result).toMatchObject({ output: ['a', 'b'], confidence: 0.9, evidence: { status: 201 } });
  });

  it.each([
    [400, 'E_CAPABILITY_REJECTED', false],
    [404, 'E_CAPABILITY_REJECTED', false],
    [422, 'E_CAPABILITY_REJECTED', false],
    [408, 'E_CAPABILITY_TIMEOUT', true],
    [429, 'E_CAPABILITY_THROTTLED', true],
    [500, 'E_CAPABILITY_UNAVAILABLE', true],
    [503, 'E_CAPABILITY_UNAVAILABLE', true],
  ])('maps HTTP %i to %s (retryable: %s)', async (status, code, retryable) => {
    server.respondWith(json(status, { message: `status ${status} body` }));

    const error = await caught(binding().invoke(aCall()));

    expect(error).toMatchObject({ name: 'CapabilityError', retryable });
    expect(codeOf(error)).toBe(code);
    expect(String(error.message)).toContain(`HTTP ${status}`);
    expect(String(error.message)).toContain(`status ${status} body`);
  });

  it('fails permanently when a 2xx body is not JSON', async () => {
    server.respondWith((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<h1>hello</h1>');
    });

    const error = await caught(binding().invoke(aCall()));

    expect(error).toMatchObject({ name: 'CapabilityError', retryable: false });
    expect(codeOf(error)).toBe('E_MALFORMED_ANSWER');
  });

  it('times out retryably when the endpoint does not answer in time', async () => {
    server.respondWith(async (_request, response) => {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      if (!response.destroyed) response.end('{}');
    });

    const started = Date.now();
    const error = await caught(binding(100).invoke(aCall()));

    expect(Date.now() - started).toBeLessThan(900);
    expect(error).toMatchObject({ name: 'CapabilityError', retryable: true });
    expect(codeOf(error)).toBe('E_CAPABILITY_TIMEOUT');
  });

  it('times out retryably when the body stalls after the headers', async () => {
    server.respondWith((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"value":');
    });

    const error = await caught(binding(150).invoke(aCall()));

    expect(error.retryable).toBe(true);
    expect(codeOf(error)).toBe('E_CAPABILITY_TIMEOUT');
  });

  it("stops the request when the executor aborts the call's signal (a step out of time)", async () => {
    let closed = false;
    server.respondWith((_request, response) => {
      response.on('close', () => {
        closed = true;
      });
    });
    const controller = new AbortController();

    const pending = caught(binding(10_000).invoke(aCall({ signal: controller.signal })));
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    const error = await pending;

    expect(error).toMatchObject({ name: 'CapabilityError', message: expect.stringContaining('stopped by its step') });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(true);
  });

  it('fails retryably when nothing listens', async () => {
    const url = await refusedUrl();

    const error = await caught(httpCapability({ url, timeoutMs: 2000, internal: true }).invoke(aCall()));

    expect(error).toMatchObject({ name: 'CapabilityError', retryable: true });
    expect(codeOf(error)).toBe('E_CAPABILITY_UNAVAILABLE');
  });
});
