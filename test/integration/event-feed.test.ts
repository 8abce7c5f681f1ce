/**
 * The live feed of a run's events through the embedded stack's HTTP API: server-sent events read with fetch until
 * RunFinished, a long poll that answers once events follow its cursor, and cursors that only grow.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { plan, step, useTestStack, waitForRun } from '../support/local-stack.ts';

const stack = useTestStack();

interface FeedEvent {
  readonly seq: string;
  readonly type: string;
  readonly stepId?: string;
}

const headers = () => ({ authorization: `Bearer ${stack.token}` });

/** Reads a stream of server-sent events to its end: each message's id, event name and parsed data. */
async function readSse(response: Response): Promise<{ id: string; event: string; data: FeedEvent }[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.split('\n').some((line) => line.startsWith('data: ')))
    .map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .filter((line) => line.startsWith(`${name}: `))
          .map((line) => line.slice(name.length + 2))
          .join('\n');
      return { id: field('id'), event: field('event'), data: JSON.parse(field('data')) as FeedEvent };
    });
}

const chainPlan = (name: string) =>
  plan(name, [
    step(stack, 'a', T.sleep, { input: { ms: 50 } }),
    step(stack, 'b', T.echo, { input: { value: 2 }, dependsOn: ['a'] }),
  ]);

describe('GET /runs/{id}/events?follow=1 on the embedded stack', { timeout: 120_000 }, () => {
  it('streams every event of a run as server-sent events, in order, and ends with RunFinished', async () => {
    const runId = await stack.startRun({ plan: chainPlan('followed from the start') });
    const response = await fetch(`${stack.url}/runs/${runId}/events?follow=1`, { headers: headers() });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const messages = await readSse(response);
    const types = messages.map((m) => m.event);
    expect(types.at(-1)).toBe('RunFinished');
    expect(types).toEqual(expect.arrayContaining(['StepStarted', 'StepSucceeded']));
    expect(messages.every((m) => m.id === m.data.seq && m.event === m.data.type)).toBe(true);
    const seqs = messages.map((m) => m.id);
    expect([...seqs].sort()).toEqual(seqs);
    expect(new Set(seqs).size).toBe(seqs.length);
    // The stream holds the audit log as it stands once the run has finished: nothing missed, nothing twice.
    await waitForRun(stack, runId);
    const { json } = await stack.request('GET', `/runs/${runId}/events`);
    expect(seqs).toEqual((json as { events: FeedEvent[] }).events.map((e) => e.seq));
  });

  it('ends a stream at once for a finished run with nothing after the cursor', async () => {
    const runId = await stack.startRun({ plan: chainPlan('followed after its end') });
    await waitForRun(stack, runId);
    const { json } = await stack.request('GET', `/runs/${runId}/events`);
    const last = (json as { events: FeedEvent[] }).events.at(-1)?.seq ?? '';
    const response = await fetch(`${stack.url}/runs/${runId}/events?follow=1&after=${last}`, { headers: headers() });
    expect(await readSse(response)).toEqual([]);
  });

  it('answers a long poll once events follow its cursor, and says when the run has finished', async () => {
    const runId = await stack.startRun({ plan: chainPlan('long-polled') });
    const seen: FeedEvent[] = [];
    let after: string | undefined;
    for (let polls = 0; polls < 50; polls++) {
      const query = `follow=1&wait=10${after === undefined ? '' : `&after=${after}`}`;
      const response = await fetch(`${stack.url}/runs/${runId}/events?${query}`, { headers: headers() });
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const page = (await response.json()) as { events: FeedEvent[]; finished?: boolean };
      seen.push(...page.events);
      after = page.events.at(-1)?.seq ?? after;
      if (page.finished) break;
    }
    expect(seen.at(-1)?.type).toBe('RunFinished');
    const { json } = await stack.request('GET', `/runs/${runId}/events`);
    expect(seen.map((e) => e.seq)).toEqual((json as { events: FeedEvent[] }).events.map((e) => e.seq));
  });

  it('answers the audit log with an ETag, and 304 while no event was added', async () => {
    const runId = await stack.startRun({ plan: chainPlan('tagged') });
    await waitForRun(stack, runId);
    const first = await fetch(`${stack.url}/runs/${runId}/events`, { headers: headers() });
    const tag = first.headers.get('etag') ?? '';
    expect(tag).toMatch(/^W\//);
    const again = await fetch(`${stack.url}/runs/${runId}/events`, {
      headers: { ...headers(), 'if-none-match': tag },
    });
    expect(again.status).toBe(304);
  });
});
