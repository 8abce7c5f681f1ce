import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { matches, weakETag } from '../../../shared/api/etag.ts';
import { echoStep, harness, planOf, seedRun, stepRecord } from './harness.ts';

describe('weakETag and matches', () => {
  it('tags equal texts alike and different texts apart, as weak tags', () => {
    expect(weakETag('{"a":1}')).toBe(weakETag('{"a":1}'));
    expect(weakETag('{"a":1}')).not.toBe(weakETag('{"a":2}'));
    expect(weakETag('{}')).toMatch(/^W\/"[0-9a-f]+-[A-Za-z0-9_-]{16}"$/);
  });

  it('compares weakly, in lists, and takes * for any tag', () => {
    const tag = weakETag('x');
    expect(matches(tag, tag)).toBe(true);
    expect(matches(tag.slice(2), tag)).toBe(true);
    expect(matches(`"other", ${tag}`, tag)).toBe(true);
    expect(matches('*', tag)).toBe(true);
    expect(matches('"other"', tag)).toBe(false);
    expect(matches(undefined, tag)).toBe(false);
  });
});

describe('GET /runs/{runId} with If-None-Match', () => {
  it('answers 304 with no body while the run is unchanged, and 200 with a new tag once a step moves', async () => {
    const h = await harness();
    await seedRun(h, 'r', planOf([echoStep('a'), echoStep('b')]), [
      stepRecord('r', 'a', { status: 'running' }),
      stepRecord('r', 'b', { status: 'pending' }),
    ]);
    const first = await h.request('GET', '/runs/r');
    const tag = first.headers.get('etag');
    expect(first.status).toBe(200);
    expect(tag).toMatch(/^W\//);

    const again = await h.request('GET', '/runs/r', { headers: { 'if-none-match': tag ?? '' } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');

    await h.store.transitionStep('r', 'a', { generation: 1, from: ['running'] }, { status: 'succeeded' });
    const moved = await h.request('GET', '/runs/r', { headers: { 'if-none-match': tag ?? '' } });
    expect(moved.status).toBe(200);
    expect(moved.headers.get('etag')).not.toBe(tag);
    expect(((await moved.json()) as { steps: { status: string }[] }).steps[0]?.status).toBe('succeeded');
  });

  it('tags each page of steps on its own', async () => {
    const h = await harness();
    await seedRun(h, 'p', planOf([echoStep('a'), echoStep('b')]), []);
    const page1 = await h.request('GET', '/runs/p?limit=1');
    const { nextCursor } = (await page1.json()) as { nextCursor: string };
    const page2 = await h.request('GET', `/runs/p?limit=1&cursor=${nextCursor}`);
    expect(page2.headers.get('etag')).not.toBe(page1.headers.get('etag'));
    const tag = page2.headers.get('etag') ?? '';
    expect(
      (await h.request('GET', `/runs/p?limit=1&cursor=${nextCursor}`, { headers: { 'if-none-match': tag } })).status,
    ).toBe(304);
  });
});

describe('compressed reads', () => {
  it('gzips a large run for a client that takes gzip, keeping the tag weak', async () => {
    const h = await harness();
    const steps = Array.from({ length: 40 }, (_, i) => echoStep(`step-${i}`));
    await seedRun(h, 'big', planOf(steps), []);
    const gzip = { 'accept-encoding': 'gzip' };
    const run = await h.request('GET', '/runs/big', { headers: gzip });
    expect(run.headers.get('content-encoding')).toBe('gzip');
    expect(run.headers.get('etag')).toMatch(/^W\//);
    const unzipped = JSON.parse(gunzipSync(Buffer.from(await run.arrayBuffer())).toString('utf8')) as {
      steps: unknown[];
    };
    expect(unzipped.steps).toHaveLength(40);
    expect((await h.request('GET', '/runs/big')).headers.get('content-encoding')).toBeNull();
    const refused = await h.request('GET', '/runs/big', { headers: { 'accept-encoding': 'gzip;q=0, identity' } });
    expect(refused.headers.get('content-encoding')).toBeNull();
    expect(((await refused.json()) as { steps: unknown[] }).steps).toHaveLength(40);
  });
});

describe('GET /runs with If-None-Match', () => {
  it('answers 304 while the page is unchanged and 200 once a run is added', async () => {
    const h = await harness();
    await seedRun(h, 'one', planOf([echoStep('a')]), []);
    const first = await h.request('GET', '/runs');
    const tag = first.headers.get('etag') ?? '';
    expect((await h.request('GET', '/runs', { headers: { 'if-none-match': tag } })).status).toBe(304);
    await seedRun(h, 'two', planOf([echoStep('a')]), [], { createdAt: '2030-02-01T00:00:00.000Z' });
    expect((await h.request('GET', '/runs', { headers: { 'if-none-match': tag } })).status).toBe(200);
  });
});
