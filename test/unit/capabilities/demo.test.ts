import { describe, expect, it } from 'vitest';
import { createDemoPack, demoBindings } from '../../../shared/capabilities/demo.ts';
import demoCatalog from '../../../shared/catalog/demo.json' with { type: 'json' };
import { loadCatalog } from '../../../shared/plan/catalog.ts';
import { type CatalogDocument, catalogSchema } from '../../../shared/plan/schema.ts';
import type { CapabilityBinding, CapabilityResult } from '../../../shared/ports/capabilities.ts';
import { aCall } from '../../support/capability-call.ts';

const demoDoc = catalogSchema.parse(demoCatalog);
const catalog = loadCatalog(demoDoc);
const clock = () => new Date('2030-01-01T12:00:00Z');
const pages = [
  { url: 'https://news.example.com/acme/1', text: 'Acme raised prices.' },
  { url: 'https://blog.example.com/acme/2', text: 'Acme launched a CRM.' },
];

/** A realistic input per target, shaped like the demo planner's steps. */
const SAMPLE_INPUTS: Record<string, unknown> = {
  'tool:web.search': { query: 'acme pricing product customers', maxResults: 8, recencyDays: 365 },
  'tool:web.search-backup': { query: 'acme pricing', maxResults: 3 },
  'tool:web.fetch': { urls: pages.map((p) => p.url), maxCharsPerPage: 20_000 },
  'tool:web.fetch-archive': { urls: [pages[0]?.url] },
  'tool:kb.search': { query: 'acme', limit: 10 },
  'agent:research.extract': { subject: 'Acme', aspects: ['pricing', 'product'], pages },
  'agent:report.writer': {
    objective: 'Compare Acme and Globex',
    brief: 'A competitor report.',
    material: [{ subject: 'Acme', findings: [{ claim: 'Acme raised prices.', sourceUrl: pages[0]?.url }] }],
    maxWords: 3000,
  },
  'agent:report.writer-lite': { objective: 'Summarise Acme', brief: 'Short.', material: [] },
  'tool:docs.publish': { title: 'Acme vs Globex', markdown: '# Report', channel: 'competitive-intel' },
  'tool:logs.query': { service: 'checkout', sinceMinutes: 60, level: 'error', limit: 500 },
  'tool:metrics.query': { service: 'checkout', metrics: ['error_rate', 'latency_p99'], sinceMinutes: 60 },
  'tool:deploys.list': { service: 'checkout', limit: 5 },
  'agent:sre.diagnose': {
    service: 'checkout',
    logs: [[{ timestamp: 't', level: 'error', message: 'timeout' }]],
    metrics: [],
    anomalies: ['error_rate above baseline'],
    deploys: [
      [
        { version: '2.14.3', deployedAt: 't' },
        { version: '2.14.2', deployedAt: 't' },
      ],
    ],
  },
  'tool:deploy.rollback': { service: 'checkout', toVersion: '2.14.2', reason: 'regression' },
  'tool:service.restart': { service: 'checkout', reason: 'pool exhausted', batchPercent: 25 },
  'tool:ci.build': { service: 'payments', version: '3.2.0', ref: 'v3.2.0' },
  'tool:ci.test': { artifactId: 'payments-3.2.0-abc', suite: 'unit' },
  'tool:security.scan': { artifactId: 'payments-3.2.0-abc', failOn: 'high' },
  'agent:release.changelog': { service: 'payments', version: '3.2.0', commit: 'abcdef1234567890' },
  'tool:deploy.release': {
    service: 'payments',
    version: '3.2.0',
    artifactId: 'payments-3.2.0-abc',
    environment: 'production',
  },
  'tool:http.smoke': { service: 'payments', environment: 'production', expectVersion: '3.2.0' },
};

const executable = catalog.targets().filter((t) => !t.startsWith('human:'));
const invoke = (bindings: Record<string, CapabilityBinding>, target: string, input: unknown) => {
  const capability = catalog.get(target);
  const binding = bindings[target];
  if (!capability || !binding) throw new Error(`no ${target}`);
  return binding.invoke(aCall({ target, capability, input }));
};

describe('demo pack', () => {
  it('has a sample input for every tool and agent of the demo catalog, each valid', () => {
    expect(Object.keys(SAMPLE_INPUTS).sort()).toEqual([...executable].sort());
    for (const [target, input] of Object.entries(SAMPLE_INPUTS))
      expect(catalog.validateInput(target, input), target).toEqual({ ok: true });
  });

  it.each(executable)('answers %s with an output that matches its outputSchema', async (target) => {
    const bindings = demoBindings(demoDoc, { delayMs: 0, clock });

    const result = await invoke(bindings, target, SAMPLE_INPUTS[target]);

    expect(catalog.validateOutput(target, result.output)).toEqual({ ok: true });
    if (target.startsWith('agent:')) {
      expect(result.confidence).toBeGreaterThanOrEqual(0);
      expect(result.confidence).toBeLessThanOrEqual(1);
    } else expect(result.confidence).toBeUndefined();
  });

  it.each(executable)('answers %s the same way for the same input', async (target) => {
    const first = await invoke(createDemoPack({ delayMs: 0, clock }).bindings, target, SAMPLE_INPUTS[target]);
    const second = await invoke(createDemoPack({ delayMs: 0, clock }).bindings, target, SAMPLE_INPUTS[target]);

    expect(second).toEqual(first);
  });

  it('answers differently for different inputs', async () => {
    const { bindings } = createDemoPack({ delayMs: 0, clock });

    const a = await invoke(bindings, 'tool:ci.build', { service: 'a', version: '1.0.0', ref: 'v1' });
    const b = await invoke(bindings, 'tool:ci.build', { service: 'b', version: '1.0.0', ref: 'v1' });

    expect((a.output as { commit: string }).commit).not.toBe((b.output as { commit: string }).commit);
  });

  it('clears the anomalies of a service once it was rolled back', async () => {
    const { bindings } = createDemoPack({ delayMs: 0, clock });
    const metrics = { service: 'checkout', metrics: ['error_rate', 'latency_p99'], sinceMinutes: 15 };

    const before = (await invoke(bindings, 'tool:metrics.query', metrics)) as CapabilityResult;
    await invoke(bindings, 'tool:deploy.rollback', { service: 'checkout', toVersion: '2.14.2' });
    const after = (await invoke(bindings, 'tool:metrics.query', metrics)) as CapabilityResult;

    expect((before.output as { anomalies: string[] }).anomalies.length).toBeGreaterThan(0);
    expect((after.output as { anomalies: string[] }).anomalies).toEqual([]);
  });

  it('recommends a rollback to the previous version when deploys are given', async () => {
    const { bindings } = createDemoPack({ delayMs: 0, clock });

    const result = await invoke(bindings, 'agent:sre.diagnose', SAMPLE_INPUTS['agent:sre.diagnose']);

    expect(result.output).toMatchObject({ action: 'rollback', rollbackTo: '2.14.2' });
  });

  it('writes a report long enough for the demo success assertion, citing its sources', async () => {
    const { bindings } = createDemoPack({ delayMs: 0, clock });

    const result = await invoke(bindings, 'agent:report.writer', SAMPLE_INPUTS['agent:report.writer']);
    const output = result.output as { markdown: string; sources: string[] };

    expect(output.markdown.length).toBeGreaterThanOrEqual(500);
    expect(output.sources).toEqual([pages[0]?.url]);
    expect(result.confidence).toBeGreaterThanOrEqual(0.7);
  });

  it('waits the configured delay before answering', async () => {
    const { bindings } = createDemoPack({ delayMs: { min: 60, max: 60 }, clock });

    const started = performance.now();
    await invoke(bindings, 'tool:kb.search', SAMPLE_INPUTS['tool:kb.search']);

    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
  });

  it('generates schema-valid answers for catalog targets it has no fake for', async () => {
    const doc: CatalogDocument = {
      capabilities: [
        {
          target: 'agent:new.thing',
          description: 'Something new.',
          sideEffect: 'none',
          inputSchema: { type: 'object' },
          outputSchema: {
            type: 'object',
            required: ['id', 'tags', 'level', 'score'],
            properties: {
              id: { type: 'string', minLength: 3 },
              tags: { type: 'array', minItems: 1, items: { $ref: '#/$defs/tag' } },
              level: { enum: ['low', 'high'] },
              score: { type: 'integer', minimum: 5, maximum: 9 },
            },
            $defs: { tag: { type: 'string' } },
          },
        },
      ],
    };
    const own = loadCatalog(doc);
    const binding = demoBindings(doc, { delayMs: 0 })['agent:new.thing'];
    const capability = own.get('agent:new.thing');
    if (!binding || !capability) throw new Error('missing');

    const result = await binding.invoke(aCall({ target: capability.target, capability, input: {} }));

    expect(own.validateOutput('agent:new.thing', result.output)).toEqual({ ok: true });
    expect(result.confidence).toBe(0.7);
  });
});
