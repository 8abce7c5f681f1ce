import { describe, expect, it } from 'vitest';
import { catalogFromEnv, createHandler, defaultDeps } from '../../../functions/step-executor.ts';
import { conformanceCatalog } from '../../../shared/capabilities/conformance.ts';
import type { ExecuteRequest, ExecuteResult } from '../../../shared/services/step-executor.ts';
import { caught } from '../../support/capability-call.ts';

function recordingExecutor(result: ExecuteResult) {
  const requests: ExecuteRequest[] = [];
  return {
    requests,
    executor: {
      execute: async (request: ExecuteRequest) => {
        requests.push(request);
        return result;
      },
    },
  };
}

describe('step-executor handler', () => {
  it('passes a valid payload to the executor and returns its result', async () => {
    const fake = recordingExecutor({ ok: false, error: { code: 'E_X', message: 'x', retryable: true } });

    const result = await createHandler(fake)({ runId: 'r', stepId: 's', generation: 1, attempt: 2 });

    expect(result).toEqual({ ok: false, error: { code: 'E_X', message: 'x', retryable: true } });
    expect(fake.requests).toEqual([{ runId: 'r', stepId: 's', generation: 1, attempt: 2 }]);
  });

  it.each([
    ['a missing attempt', { runId: 'r', stepId: 's', generation: 1 }, '/attempt'],
    ['a fractional generation', { runId: 'r', stepId: 's', generation: 1.5, attempt: 1 }, '/generation'],
    ['an empty run id', { runId: '', stepId: 's', generation: 1, attempt: 1 }, '/runId'],
    ['attempt 0', { runId: 'r', stepId: 's', generation: 1, attempt: 0 }, '/attempt'],
  ])('refuses %s with a ValidationError', async (_label, payload, path) => {
    const fake = recordingExecutor({ ok: true });

    const error = await caught(createHandler(fake)(payload));

    expect(error.name).toBe('ValidationError');
    expect((error.errors as { path: string }[]).map((e) => e.path)).toContain(path);
    expect(fake.requests).toEqual([]);
  });

  it('builds its dependencies on the first invocation, from the environment', async () => {
    const deps = defaultDeps({});

    const error = await caught(deps.executor.execute({ runId: 'r', stepId: 's', generation: 1, attempt: 1 }));

    expect(String(error.message)).toContain('CAIRN_TABLE_NAME is not set');
  });

  it('reads the catalog from CAIRN_CATALOG, or falls back to the bundled demo catalog', () => {
    const configured = catalogFromEnv({ CAIRN_CATALOG: JSON.stringify(conformanceCatalog()) });
    const fallback = catalogFromEnv({});

    expect(configured.has('tool:conformance.echo')).toBe(true);
    expect(configured.has('tool:web.search')).toBe(false);
    expect(fallback.has('tool:web.search')).toBe(true);
  });
});
