/**
 * Every JSON body goes through the strict codec (body.ts): a number a double cannot carry is refused with 400
 * E_BAD_REQUEST, its E_JSON issue pointing at the value, instead of reaching the route changed.
 */
import { describe, expect, it } from 'vitest';
import { echoStep, harness, planOf } from './harness.ts';

/** The body's JSON text with `literal` written in place of the echo step's input value. */
const planBody = (literal: string): string =>
  JSON.stringify({ plan: planOf([echoStep('a', { input: { value: 'x' } })]) }).replace('"value":"x"', `"n":${literal}`);

describe('JSON bodies: numbers a double cannot carry', () => {
  it('refuses an integer past 2^53-1 in a plan with E_JSON at the value, and stores nothing', async () => {
    const h = await harness();
    const before = await h.storedKeys();

    const validated = await h.request('POST', '/plans/validate', { body: planBody('12345678901234567890') });
    const submitted = await h.request('POST', '/runs', { body: planBody('1e-400') });

    expect(validated.status).toBe(400);
    expect(await validated.json()).toMatchObject({
      error: { code: 'E_BAD_REQUEST', details: [{ code: 'E_JSON', path: '/plan/steps/0/input/n' }] },
    });
    expect(submitted.status).toBe(400);
    expect(await submitted.json()).toMatchObject({
      error: { code: 'E_BAD_REQUEST', details: [{ code: 'E_JSON', path: '/plan/steps/0/input/n' }] },
    });
    expect(await h.storedKeys()).toEqual(before);
  });
});
