/**
 * The OpenAI-compatible plan model, loaded on the first plan it is asked for: the composition root names it at boot,
 * but the `openai` client (about half a second to load) is only loaded when a plan is wanted.
 */
import type { PlannerEndpointSettings } from '../../config/settings.ts';
import type { PlanModel } from '../../ports/plan-model.ts';

export function lazyOpenAIPlanModel(endpoint: PlannerEndpointSettings): PlanModel {
  let loaded: Promise<PlanModel> | undefined;
  const model = () => {
    loaded ??= import('./openai-plan-model.ts').then((m) => m.openAIPlanModelFromSettings(endpoint));
    return loaded;
  };
  return {
    name: `openai:${endpoint.model}`,
    proposePlan: async (request) => (await model()).proposePlan(request),
  };
}
