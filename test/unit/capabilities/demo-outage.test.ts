import { describe, expect, it } from 'vitest';
import { createDemoPack, DEMO_OUTAGE_CODE } from '../../../shared/capabilities/demo.ts';
import demoCatalog from '../../../shared/catalog/demo.json' with { type: 'json' };
import { loadCatalog } from '../../../shared/plan/catalog.ts';
import { aCall, caught } from '../../support/capability-call.ts';

const catalog = loadCatalog(demoCatalog);
const search = (bindings: ReturnType<typeof createDemoPack>['bindings'], target: string) => {
  const capability = catalog.get(target);
  const binding = bindings[target];
  if (!capability || !binding) throw new Error(`no ${target}`);
  return binding.invoke(aCall({ target, capability, input: { query: 'acme pricing' } }));
};

describe('the demo pack outage option', () => {
  it('fails a target that is down with a permanent provider-unavailable error; its alternative answers', async () => {
    const { bindings } = createDemoPack({ delayMs: 0, outage: new Set(['tool:web.search']) });

    const error = await caught(search(bindings, 'tool:web.search'));
    const backup = await search(bindings, 'tool:web.search-backup');

    expect(error).toMatchObject({ name: 'CapabilityError', retryable: false, context: { code: DEMO_OUTAGE_CODE } });
    expect(String(error.message)).toMatch(/provider unavailable/);
    expect(backup.output).toMatchObject({ query: 'acme pricing' });
  });

  it('reads the set on every call, so an outage can start and end', async () => {
    const outage = new Set<string>();
    const { bindings } = createDemoPack({ delayMs: 0, outage });

    await expect(search(bindings, 'tool:web.search')).resolves.toBeDefined();
    outage.add('tool:web.search');
    await expect(search(bindings, 'tool:web.search')).rejects.toMatchObject({ name: 'CapabilityError' });
    outage.clear();
    await expect(search(bindings, 'tool:web.search')).resolves.toBeDefined();
  });
});
