/**
 * Builtin fakes for every target of the demo catalog (shared/catalog/demo.json), so `npm start` runs the demo
 * objectives end to end with no network and no account. Answers are derived from a hash of the input (the same input
 * gives the same answer); a small simulated world keeps the incident story coherent (a rollback or restart heals
 * the service's metrics; publishing the same title again bumps its version). Each call waits a little (100–300 ms by
 * default) so the demo's progress is visible. Catalog targets without a hand-written fake get a value generated
 * from their outputSchema. A simulated outage (`outage`) makes chosen targets fail for good, so a run can show a
 * replan onto a catalog alternative (the `npm start` demo takes tool:web.search down).
 */
import type { CatalogDocument } from '../plan/schema.ts';
import type { CapabilityBinding, CapabilityCall } from '../ports/capabilities.ts';
import { builtinAgent, builtinTool } from './builtin.ts';
import { CAPABILITY_ERROR_CODES, capabilityError } from './capability-errors.ts';
import {
  fakeFromSchema,
  field,
  hash32,
  hex,
  integer,
  objectsWith,
  type Rng,
  rngFor,
  slug,
  text,
  titleCase,
  urlsIn,
} from './demo-data.ts';

export interface DemoOptions {
  /** Simulated latency per call: a fixed number of ms, or a range (picked from the input's hash). */
  readonly delayMs?: number | { readonly min: number; readonly max: number };
  readonly clock?: () => Date;
  /**
   * A simulated provider outage: these targets fail every call with a permanent "provider unavailable" error (no
   * retry helps; a replan onto a catalog alternative does). Read on every call, so a caller may change the set.
   */
  readonly outage?: ReadonlySet<string>;
}

/** The error code of a simulated outage (a capability that cannot serve at all). */
export const DEMO_OUTAGE_CODE = CAPABILITY_ERROR_CODES.unavailable;

function outageError(target: string) {
  return capabilityError(DEMO_OUTAGE_CODE, `${target}: provider unavailable (simulated outage)`, {
    retryable: false,
    details: { outage: true },
  });
}

type Fake = (input: unknown, rng: Rng, call: CapabilityCall) => unknown;
type AgentFake = (input: unknown, rng: Rng, call: CapabilityCall) => { output: unknown; confidence: number };

const SOURCES = ['docs', 'blog', 'news', 'community', 'research'];
const sentence = (rng: Rng, subject: string): string =>
  rng.pick([
    `${subject} expanded its product line this year, with a focus on mid-market customers.`,
    `Analysts describe ${subject} as competitive on price but behind on integrations.`,
    `${subject} reports steady growth in enterprise accounts and a new usage-based plan.`,
    `Customers cite onboarding speed as the main reason they chose ${subject}.`,
    `${subject} published a roadmap that prioritises security certifications and EU hosting.`,
  ]);

function semver(seed: string, back: number): string {
  const rng = rngFor('version', seed);
  const major = rng.int(1, 4);
  const minor = rng.int(5, 30);
  const patch = rng.int(back, back + 6);
  return `${major}.${minor}.${patch - back}`;
}

export interface DemoPack {
  /** The hand-written fakes, by target. */
  readonly bindings: Record<string, CapabilityBinding>;
  /** A binding that answers with a value generated from the capability's outputSchema. */
  generated(target: string): CapabilityBinding;
}

export function createDemoPack(options: DemoOptions = {}): DemoPack {
  const clock = options.clock ?? (() => new Date());
  const mitigated = new Set<string>();
  const published = new Map<string, number>();
  const minutesAgo = (minutes: number): string => new Date(clock().getTime() - minutes * 60_000).toISOString();
  const recentDeploys = (service: string, count: number) =>
    Array.from({ length: count }, (_, i) => ({
      version: semver(service, i),
      deployedAt: minutesAgo(47 + i * 2 * 24 * 60),
      author: rngFor('author', service, i).pick(['ana', 'bo', 'chen', 'dara', 'eli']),
      commit: hex(rngFor('commit', service, i), 12),
    }));

  const tools: Record<string, Fake> = {
    'tool:web.search': (input, rng) => {
      const query = text(input, 'query', 'query');
      const words = slug(query, 40);
      return {
        query,
        results: Array.from({ length: integer(input, 'maxResults', 5) }, (_, i) => {
          const source = rng.pick(SOURCES);
          return {
            title: `${titleCase(query.slice(0, 80))} — ${titleCase(source)} #${i + 1}`,
            url: `https://${source}.example.com/${words}/${hex(rng, 6)}`,
            snippet: sentence(rng, titleCase(query.split(/\s+/)[0] ?? query)),
          };
        }),
      };
    },
    'tool:web.fetch': (input, rng) => {
      const max = integer(input, 'maxCharsPerPage', 20_000);
      const urls = Array.isArray(field(input, 'urls')) ? (field(input, 'urls') as unknown[]).map(String) : [];
      return {
        pages: urls.map((url) => {
          const subject = titleCase(url.split('/').at(-2)?.split('-')[0] ?? 'The company');
          const body = Array.from({ length: 4 }, () => sentence(rng, subject)).join(' ');
          return {
            url,
            status: 200,
            title: `${subject} — ${url.replace(/^https?:\/\//, '').split('/')[0] || 'web'}`,
            text: body.slice(0, max),
          };
        }),
      };
    },
    'tool:kb.search': (input, rng) => ({
      documents: Array.from({ length: Math.min(integer(input, 'limit', 5), 5) }, (_, i) => ({
        id: `KB-${rng.int(1000, 9999)}`,
        title: `${titleCase(text(input, 'query', 'topic').slice(0, 60))} (internal note ${i + 1})`,
        excerpt: `Earlier work on "${text(input, 'query').slice(0, 80)}": ${rng.pick(['decision record', 'post-mortem', 'customer interview summary'])}.`,
        updatedAt: minutesAgo(rng.int(1, 400) * 24 * 60),
      })),
    }),
    'tool:docs.publish': (input) => {
      const channel = text(input, 'channel', 'general');
      const key = `${channel}/${slug(text(input, 'title'))}`;
      const version = (published.get(key) ?? 0) + 1;
      published.set(key, version);
      return { documentId: `doc-${hash32(key).toString(16)}`, url: `https://docs.internal.example/${key}`, version };
    },
    'tool:logs.query': (input, rng) => {
      const service = text(input, 'service', 'service');
      const healthy = mitigated.has(service);
      const entries = healthy
        ? []
        : [
            { message: `upstream timeout calling ${service}-db after 3000 ms`, count: rng.int(120, 900) },
            {
              message: `NullPointerException in CheckoutHandler (release ${semver(service, 0)})`,
              count: rng.int(40, 300),
            },
            { message: 'circuit breaker open for payments-api', count: rng.int(5, 60) },
          ].map((e, i) => ({ timestamp: minutesAgo(i * 7 + 1), level: 'error', ...e }));
      return { entries: entries.slice(0, integer(input, 'limit', 500)), truncated: false };
    },
    'tool:metrics.query': (input, rng) => {
      const service = text(input, 'service', 'service');
      const healthy = mitigated.has(service);
      const metrics = Array.isArray(field(input, 'metrics')) ? (field(input, 'metrics') as unknown[]).map(String) : [];
      const base: Record<string, [number, number]> = {
        error_rate: [0.3, 6.8],
        latency_p50: [42, 180],
        latency_p99: [310, 2400],
        throughput: [1200, 950],
        saturation: [0.45, 0.91],
      };
      const series = metrics.map((metric) => {
        const [normal, incident] = base[metric] ?? [1, 2];
        return {
          metric,
          points: Array.from({ length: 6 }, (_, i) => ({
            t: minutesAgo((5 - i) * Math.max(1, Math.floor(integer(input, 'sinceMinutes', 60) / 6))),
            v: Math.round((!healthy && i >= 3 ? incident : normal) * (0.95 + rng.next() * 0.1) * 100) / 100,
          })),
        };
      });
      const anomalies = healthy
        ? []
        : metrics
            .filter((m) => m === 'error_rate' || m === 'latency_p99' || m === 'saturation')
            .map((m) => `${m} above baseline since ${semver(service, 0)} was deployed`);
      return { series, anomalies };
    },
    'tool:deploys.list': (input) => ({
      deploys: recentDeploys(text(input, 'service', 'service'), Math.min(integer(input, 'limit', 5), 10)),
    }),
    'tool:deploy.rollback': (input, rng) => {
      const service = text(input, 'service', 'service');
      mitigated.add(service);
      return {
        deploymentId: `dep-${hex(rng, 10)}`,
        fromVersion: semver(service, 0),
        toVersion: text(input, 'toVersion'),
      };
    },
    'tool:service.restart': (input, rng) => {
      mitigated.add(text(input, 'service', 'service'));
      return { restartedInstances: rng.int(3, 12), failedInstances: 0 };
    },
    'tool:ci.build': (input, rng) => ({
      artifactId: `${slug(text(input, 'service', 'app'))}-${text(input, 'version', '0.0.0')}-${hex(rng, 8)}`,
      commit: hex(rng, 40),
      version: text(input, 'version', '0.0.0'),
    }),
    'tool:ci.test': (input, rng) => {
      const suite = text(input, 'suite', 'unit');
      return {
        suite,
        passed: suite === 'unit' ? rng.int(800, 1600) : rng.int(90, 300),
        failed: 0,
        reportUrl: `https://ci.internal.example/reports/${slug(text(input, 'artifactId'))}/${suite}`,
      };
    },
    'tool:security.scan': (_input, rng) => ({
      findings: Array.from({ length: rng.int(0, 2) }, () => ({
        id: `CVE-2024-${rng.int(10000, 49999)}`,
        severity: rng.pick(['low', 'medium'] as const),
        package: rng.pick(['lodash', 'openssl', 'protobuf', 'jackson-databind']),
      })),
    }),
    'tool:deploy.release': (input, rng) => {
      const service = text(input, 'service', 'service');
      return {
        deploymentId: `dep-${hex(rng, 10)}`,
        environment: text(input, 'environment', 'staging'),
        version: text(input, 'version'),
        previousVersion: semver(service, 0),
      };
    },
    'tool:http.smoke': (input) => ({
      passed: true,
      checks: ['health', 'login', 'search', 'checkout'].map((name) => ({
        name,
        passed: true,
        detail: `${name} OK on ${text(input, 'environment', 'staging')}${text(input, 'expectVersion') ? ` (version ${text(input, 'expectVersion')})` : ''}`,
      })),
    }),
  };
  tools['tool:web.search-backup'] = tools['tool:web.search'] as Fake;
  tools['tool:web.fetch-archive'] = tools['tool:web.fetch'] as Fake;

  const writer =
    (lite: boolean): AgentFake =>
    (input, rng) => {
      const objective = text(input, 'objective', 'the objective');
      const material = field(input, 'material');
      const sources = urlsIn(material, 12);
      const claims = objectsWith(material, ['claim']).map((f) => String(f.claim));
      const snippets = objectsWith(material, ['snippet']).map((f) => String(f.snippet));
      const points = [...claims, ...snippets].slice(0, 12);
      const title = titleCase(objective.replace(/[.?!]+$/, '').slice(0, 120)) || 'Report';
      const markdown = [
        `# ${title}`,
        '## Summary',
        `${text(input, 'brief', 'A sourced summary.')} This report draws on ${sources.length} sources.`,
        '## Findings',
        ...(points.length > 0
          ? points.map((p, i) => `- ${p} [${(i % Math.max(1, sources.length)) + 1}]`)
          : ['- The material given was empty; the findings below are general.']),
        '## Method',
        `The material was read in full and each claim kept only when a source supports it (${points.length} ` +
          'points retained). Claims that disagree between sources are reported side by side rather than merged.',
        '## Implications',
        'Prioritise the gaps the findings show, and revisit the comparison when new pricing or product news appears.',
        '## Limitations',
        'This draft reflects only the material gathered for this run; anything outside it is not covered.',
        '## Sources',
        ...sources.map((url, i) => `${i + 1}. ${url}`),
      ].join('\n\n');
      const base = sources.length === 0 ? 0.55 : lite ? 0.72 : 0.8;
      return { output: { title, markdown, sources }, confidence: Math.round((base + rng.next() * 0.12) * 100) / 100 };
    };

  const agents: Record<string, AgentFake> = {
    'agent:research.extract': (input, rng) => {
      const subject = text(input, 'subject', 'the subject');
      const aspects = Array.isArray(field(input, 'aspects')) ? (field(input, 'aspects') as unknown[]).map(String) : [];
      const pages = objectsWith(field(input, 'pages'), ['url']);
      const findings = pages.flatMap((page, i) => [
        {
          ...(aspects.length > 0 ? { aspect: aspects[i % aspects.length] as string } : {}),
          claim: sentence(rng, subject),
          sourceUrl: String(page.url),
        },
      ]);
      while (findings.length < 2 && pages.length > 0)
        findings.push({ claim: sentence(rng, subject), sourceUrl: String(pages[0]?.url) });
      return {
        output: { subject, summary: `${findings.length} sourced findings on ${subject}.`, findings },
        confidence: Math.round((pages.length >= 2 ? 0.78 : 0.5) * 100 + rng.int(0, 12)) / 100,
      };
    },
    'agent:report.writer': writer(false),
    'agent:report.writer-lite': writer(true),
    'agent:sre.diagnose': (input, rng) => {
      const service = text(input, 'service', 'the service');
      const deploys = objectsWith(field(input, 'deploys'), ['version']);
      const anomalies = (Array.isArray(field(input, 'anomalies')) ? (field(input, 'anomalies') as unknown[]) : [])
        .flat(3)
        .map(String);
      const newest = deploys[0]?.version;
      const previous = deploys[1]?.version;
      const rollback = typeof newest === 'string' && typeof previous === 'string';
      return {
        output: {
          summary: rollback
            ? `${service} errors and p99 latency rose right after release ${newest}.`
            : `${service} is degraded with no recent deploy to blame.`,
          rootCause: rollback
            ? `A regression shipped in ${newest} (timeouts to the database and a crash in the checkout handler).`
            : 'Resource exhaustion on the service instances (connection pool saturation).',
          action: rollback ? 'rollback' : 'restart',
          ...(rollback ? { rollbackTo: previous } : {}),
          evidence: anomalies.length > 0 ? anomalies.slice(0, 5) : ['error logs in the last hour'],
        },
        confidence: Math.round((rollback ? 0.82 : 0.66) * 100 + rng.int(0, 8)) / 100,
      };
    },
    'agent:release.changelog': (input, rng) => {
      const version = text(input, 'version', '0.0.0');
      const highlights = [
        rng.pick(['Faster search results', 'New export to CSV', 'Redesigned settings page']),
        rng.pick(['Fewer timeouts under load', 'Smaller bundle size', 'Better error messages']),
      ];
      const markdown = [
        `# ${text(input, 'service', 'Service')} ${version}`,
        `Built from commit \`${text(input, 'commit').slice(0, 12)}\`.`,
        '## Highlights',
        ...highlights.map((h) => `- ${h}`),
        '## Fixes',
        '- Assorted bug fixes and dependency updates',
      ].join('\n\n');
      return { output: { markdown, highlights, breakingChanges: [] }, confidence: 0.8 + rng.int(0, 10) / 100 };
    },
  };

  const delay = async (call: CapabilityCall): Promise<void> => {
    const spec = options.delayMs ?? { min: 100, max: 300 };
    const ms = typeof spec === 'number' ? spec : rngFor('delay', call.target, call.input).int(spec.min, spec.max);
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
    if (options.outage?.has(call.target)) throw outageError(call.target);
  };
  const bindings: Record<string, CapabilityBinding> = {};
  for (const [target, fake] of Object.entries(tools))
    bindings[target] = builtinTool(`demo ${target}`, async (input, call) => {
      await delay(call);
      return fake(input, rngFor(target, input), call);
    });
  for (const [target, fake] of Object.entries(agents))
    bindings[target] = builtinAgent(`demo ${target}`, async (input, call) => {
      await delay(call);
      return fake(input, rngFor(target, input), call);
    });
  // Anything else the catalog lists gets a placeholder from its contract, so a grown catalog still runs.
  const generated = (target: string): CapabilityBinding => {
    const fake = async (input: unknown, call: CapabilityCall) => {
      await delay(call);
      return fakeFromSchema(call.capability.outputSchema, rngFor(call.target, input));
    };
    return target.startsWith('agent:')
      ? builtinAgent(`demo ${target} (generated)`, async (input, call) => ({
          output: await fake(input, call),
          confidence: 0.7,
        }))
      : builtinTool(`demo ${target} (generated)`, fake);
  };
  return { bindings, generated };
}

/** Bindings for every tool and agent target of a catalog (hand-written fakes first, generated ones otherwise). */
export function demoBindings(catalog: CatalogDocument, options: DemoOptions = {}): Record<string, CapabilityBinding> {
  const pack = createDemoPack(options);
  const bindings: Record<string, CapabilityBinding> = {};
  for (const { target } of catalog.capabilities)
    if (!target.startsWith('human:')) bindings[target] = pack.bindings[target] ?? pack.generated(target);
  return bindings;
}
