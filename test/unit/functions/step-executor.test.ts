import { describe, expect, it } from 'vitest';
import { createHandler, defaultDeps } from '../../../functions/step-executor.ts';
import { catalogFromEnv } from '../../../shared/adapters/catalog-from-env.ts';
import { conformanceCatalog } from '../../../shared/capabilities/conformance.ts';
import type { RunStepRequest, StepNext } from '../../../shared/services/coordinator-types.ts';
import { caught } from '../../support/capability-call.ts';

function recordingRunner(answer: StepNext) {
  const requests: RunStepRequest[] = [];
  return {
    requests,
    runner: {
      runStep: async (request: RunStepRequest) => {
        requests.push(request);
        return answer;
      },
    },
  };
}

/** RunStep's payload as the step machine sends it: the execution's ids, the last answer and a person's decision. */
const payload = (fields: Record<string, unknown> = {}) => ({
  runId: 'r',
  stepId: 's',
  generation: 1,
  executionId: 'arn:aws:states:us-east-1:123456789012:execution:step:r-s-g1',
  previous: null,
  decision: null,
  ...fields,
});

describe('step-executor handler (RunStep)', () => {
  it('passes the first call of an execution to the runner and returns its answer', async () => {
    const fake = recordingRunner({ action: 'retry', attempt: 2, delaySeconds: 1 });

    const result = await createHandler(fake)(payload());

    expect(result).toEqual({ action: 'retry', attempt: 2, delaySeconds: 1 });
    expect(fake.requests).toEqual([
      {
        runId: 'r',
        stepId: 's',
        generation: 1,
        executionId: payload().executionId,
        previous: null,
        decision: null,
        brief: null,
      },
    ]);
  });

  it('takes the brief from the execution’s input the machine sends (started), or from brief as before', async () => {
    const fake = recordingRunner({ action: 'done', attempt: 1 });
    const brief = {
      revision: 1,
      step: { id: 's', title: 'S', target: 'tool:t', dependsOn: [] },
      upstream: [],
      outputs: [],
    };
    await createHandler(fake)(payload({ started: { runId: 'r', brief } }));
    await createHandler(fake)(payload({ brief }));
    // An execution an older decider started: its input has no brief.
    await createHandler(fake)(payload({ started: { runId: 'r' } }));
    expect(fake.requests.map((r) => r.brief)).toEqual([brief, brief, null]);
  });

  it('passes the previous answer and a person’s decision, the nulls Step Functions sends made absent', async () => {
    const fake = recordingRunner({ action: 'done', attempt: 1 });
    const previous = { action: 'await', attempt: 1, kind: 'review', timeoutSeconds: 60 };

    await createHandler(fake)(
      payload({ previous, decision: { decision: 'edit', output: { draft: 'v2' }, comment: null, by: 'ana' } }),
    );
    await createHandler(fake)(payload({ previous: { action: 'retry', attempt: 3, delaySeconds: 4 } }));

    expect(fake.requests[0]).toMatchObject({ previous });
    expect(fake.requests[0]?.decision).toEqual({
      decision: 'edit',
      output: { draft: 'v2' },
      comment: undefined,
      by: 'ana',
    });
    expect(fake.requests[1]).toMatchObject({
      previous: { action: 'retry', attempt: 3, delaySeconds: 4 },
      decision: null,
    });
  });

  it.each([
    ['a missing execution id', payload({ executionId: undefined }), '/executionId'],
    [
      'a missing previous answer (the machine always sends one, null at first)',
      payload({ previous: undefined }),
      '/previous',
    ],
    ['a fractional generation', payload({ generation: 1.5 }), '/generation'],
    ['an empty run id', payload({ runId: '' }), '/runId'],
    [
      'a retry of attempt 0',
      payload({ previous: { action: 'retry', attempt: 0, delaySeconds: 1 } }),
      '/previous/attempt',
    ],
    ['an unknown next action', payload({ previous: { action: 'jump', attempt: 1 } }), '/previous/action'],
    [
      'a decision that is none of approve, reject, edit',
      payload({ decision: { decision: 'maybe' } }),
      '/decision/decision',
    ],
  ])('refuses %s with a ValidationError', async (_label, event, path) => {
    const fake = recordingRunner({ action: 'done', attempt: 1 });

    const error = await caught(createHandler(fake)(event));

    expect(error.name).toBe('ValidationError');
    expect((error.errors as { path: string }[]).map((e) => e.path)).toContain(path);
    expect(fake.requests).toEqual([]);
  });

  it('builds its dependencies from the environment, through the root (the handler does so on its first call)', () => {
    expect(() => defaultDeps({})).toThrow('CAIRN_TABLE_NAME is not set');
  });

  it('reads the catalog from CAIRN_CATALOG, or falls back to the bundled demo catalog', () => {
    const configured = catalogFromEnv({ CAIRN_CATALOG: JSON.stringify(conformanceCatalog()) });
    const fallback = catalogFromEnv({});

    expect(configured.has('tool:conformance.echo')).toBe(true);
    expect(configured.has('tool:web.search')).toBe(false);
    expect(fallback.has('tool:web.search')).toBe(true);
  });
});
