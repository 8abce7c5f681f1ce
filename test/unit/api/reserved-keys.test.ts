/**
 * "Unknown keys anywhere are rejected": a `__proto__` key, which the copies zod makes drop silently (or turn into an
 * object's prototype), is refused at any depth of any JSON body with 400 E_BAD_REQUEST and the codec's issue
 * E_RESERVED_KEY. `constructor` and `prototype` are ordinary keys: refused where a strict schema knows the fields,
 * kept as data where the body holds free JSON, and they never change a prototype.
 */
import { describe, expect, it } from 'vitest';
import { approvalRecord, echoStep, gateStep, harness, planOf, seedRun, stepRecord } from './harness.ts';

type ErrorAnswer = { error: { code: string; message: string; details?: { code: string; path: string }[] } };

async function seeded() {
  const h = await harness();
  await seedRun(h, 'run-a', planOf([echoStep('before'), gateStep('gate', { dependsOn: ['before'] })]), [
    stepRecord('run-a', 'before', { status: 'succeeded', output: { value: 'x' } }),
    stepRecord('run-a', 'gate', { status: 'awaiting_approval' }),
  ]);
  await h.store.putApproval(approvalRecord('ap1'));
  return h;
}

const planText = JSON.stringify(planOf([echoStep('a')]));
/** The plan's first step with `extra` spliced in as its first member. */
const planWithStepMember = (extra: string): string => planText.replace('"steps":[{', `"steps":[{${extra},`);

async function expectReserved(res: Response, path: string): Promise<void> {
  expect(res.status).toBe(400);
  const body = (await res.json()) as ErrorAnswer;
  expect(body.error.code).toBe('E_BAD_REQUEST');
  expect(body.error.message).toContain('reserved key "__proto__"');
  expect(body.error.details).toEqual([{ code: 'E_RESERVED_KEY', path, message: expect.any(String) }]);
}

describe('a "__proto__" key in a JSON body', () => {
  it('is refused at the top level of POST /runs, and nothing is stored or started', async () => {
    const h = await seeded();
    const res = await h.request('POST', '/runs', {
      body: '{"objective":"x","directTarget":"tool:echo","__proto__":{"plan":{"steps":[]}}}',
      headers: { 'idempotency-key': 'k-proto' },
    });
    await expectReserved(res, '/__proto__');
    expect(h.executions.starts).toEqual([]);
    const runs = (await (await h.request('GET', '/runs')).json()) as { runs: { runId: string }[] };
    expect(runs.runs.map((r) => r.runId)).toEqual(['run-a']);
  });

  it('is refused deep inside a submitted plan, also when written with escapes', async () => {
    const h = await seeded();
    const deep = planText.replace('"input":{"value":"a"}', '"input":{"value":"a","nested":[{"__proto__":{"x":1}}]}');
    expect(deep).not.toBe(planText);
    await expectReserved(
      await h.request('POST', '/runs', { body: `{"plan":${deep}}` }),
      '/plan/steps/0/input/nested/0/__proto__',
    );
    await expectReserved(
      await h.request('POST', '/plans/validate', { body: `{"plan":${planWithStepMember('"\\u005f_proto__":{}')}}` }),
      '/plan/steps/0/__proto__',
    );
  });

  it('is refused in every other JSON body: plans, replans, invalidations, decisions and their checks', async () => {
    const h = await seeded();
    const cases: [string, string, string][] = [
      ['/plans', '{"objective":"x","directTarget":"tool:echo","__proto__":null}', '/__proto__'],
      ['/runs/run-a/replan', '{"reason":"r","__proto__":{}}', '/__proto__'],
      ['/runs/run-a/steps/before/invalidate', '{"__proto__":{"reason":"r"}}', '/__proto__'],
      [
        '/approvals/ap1',
        '{"decision":"edit","output":{"approved":true,"__proto__":{"approved":false}}}',
        '/output/__proto__',
      ],
      ['/approvals/ap1/check', '{"output":{"approved":true,"__proto__":{}}}', '/output/__proto__'],
    ];
    for (const [path, body, at] of cases) await expectReserved(await h.request('POST', path, { body }), at);
    expect((await h.store.getApproval('ap1'))?.status).toBe('pending');
  });

  it('is plain data as a string value', async () => {
    const h = await seeded();
    const res = await h.request('POST', '/runs/run-a/replan', { body: '{"reason":"__proto__"}' });
    expect(res.status).not.toBe(400);
  });
});

describe('"constructor" and "prototype" keys in a JSON body', () => {
  it('are unknown fields where the body has a strict shape', async () => {
    const h = await seeded();
    for (const body of [
      '{"objective":"x","directTarget":"tool:echo","constructor":{"prototype":{"polluted":true}}}',
      '{"objective":"x","directTarget":"tool:echo","prototype":{}}',
    ]) {
      const res = await h.request('POST', '/runs', { body });
      expect(res.status, body).toBe(400);
      expect(((await res.json()) as ErrorAnswer).error.code).toBe('E_BAD_REQUEST');
    }
    const step = await h.request('POST', '/plans/validate', {
      body: `{"plan":${planWithStepMember('"constructor":{"prototype":{}}')}}`,
    });
    expect(step.status).toBe(422);
    expect(((await step.json()) as { errors: { code: string }[] }).errors.map((e) => e.code)).toContain('E_FIELD');
  });

  it('are kept as data in free JSON and pollute nothing', async () => {
    const h = await seeded();
    const input = { note: 'a', constructor: { prototype: { polluted: true } }, prototype: { polluted: true } };
    // The gate's input contract is any object, so the keys are the step's data.
    const plan = planOf([gateStep('g', { input })]);
    const res = await h.request('POST', '/runs', { body: { plan } });
    expect(res.status).toBe(202);
    const { runId } = (await res.json()) as { runId: string };
    const stored = (await h.store.getRun(runId))?.submittedPlan?.steps[0]?.input as Record<string, unknown>;
    expect(stored).toEqual(input);
    expect(Object.keys(stored)).toEqual(['note', 'constructor', 'prototype']);
    expect(Object.getPrototypeOf(stored)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
