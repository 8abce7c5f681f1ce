import { describe, expect, it } from 'vitest';
import { buildPlanPrompt, PLAN_TOOL_NAME } from '../../../shared/planner/prompt.ts';
import { demoCatalog, modelRequest } from './fixtures.ts';

const catalog = demoCatalog();

describe('buildPlanPrompt', () => {
  it('lists every catalog target with its side effect and contracts, and states the limits', () => {
    const { system, user } = buildPlanPrompt(modelRequest('Triage the incident in api', catalog, { maxSteps: 12 }));
    for (const capability of catalog.capabilities()) {
      expect(system).toContain(`- ${capability.target} (sideEffect: ${capability.sideEffect})`);
      expect(system).toContain(JSON.stringify(capability.inputSchema));
    }
    expect(system).toContain('At most 12 steps');
    expect(user).toContain('Triage the incident in api');
    expect(user).toContain(PLAN_TOOL_NAME);
  });

  it('adds the replanning context only when it is given', () => {
    const first = buildPlanPrompt(modelRequest('o', catalog));
    expect(first.user).not.toContain('replan');
    const replan = buildPlanPrompt({
      ...modelRequest('o', catalog),
      history: [{ stepId: 'fetch', title: 'Fetch', target: 'tool:web.fetch', status: 'failed', summary: '403' }],
      diagnosis: { stepId: 'fetch', code: 'E_HTTP', message: 'forbidden', target: 'tool:web.fetch' },
    });
    expect(replan.user).toContain('- fetch [failed] Fetch: 403');
    expect(replan.user).toContain('step fetch (tool:web.fetch) failed with E_HTTP: forbidden');
  });
});
