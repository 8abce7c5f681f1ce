/**
 * Competitor research: "compile a competitor research report on Acme, Globex and Initech". One research branch per
 * competitor (or, for a single subject, per aspect: pricing, product, customers, news), each search → fetch →
 * extract, all in parallel; a writing agent joins them, an editor reviews, and an approved report is published.
 */

import { clip, expr, firstMatch, literal, slug, uniqueKeys } from '../text.ts';
import { compound, type Method, primitive, type Refs, ROOT_TASK, type TaskNode } from '../types.ts';

const PATTERNS = [
  /\bcompetit(?:ors?|ive)\b[^\n]{0,80}?\b(?:research|analysis|report|landscape|intelligence|comparison|review|brief)(?:\s+report)?\s+(?:on|of|about|for|covering|comparing|into)\s+(?<subject>[^\n]+)/i,
  /^\s*(?:compare|benchmark)\s+(?:the\s+)?(?:competitors\s+)?(?<subject>[^\n]+)/i,
];

/** At most this many parallel branches; further competitors share the last one. */
const MAX_BRANCHES = 6;
/** Steps one branch costs (group, search, fetch, extract) and the steps around the branches. */
const BRANCH_STEPS = 4;
const FIXED_STEPS = 5;

const ASPECTS = [
  { key: 'pricing', label: 'pricing and packaging', query: 'pricing plans packaging' },
  { key: 'product', label: 'product and roadmap', query: 'product features roadmap' },
  { key: 'customers', label: 'customers and positioning', query: 'customers case studies positioning' },
  { key: 'news', label: 'recent news', query: 'news announcements funding' },
] as const;

const ALL_ASPECTS = ASPECTS.map((a) => a.label);

/** "Acme, Globex and Initech" → three names; "the CRM market." → one. */
export function splitSubjects(subject: string): string[] {
  return subject
    .replace(/[\s.!?]+$/, '')
    .split(/\s*(?:,|;|&|\band\b|\bvs\.?(?=\s)|\bversus\b)\s*/i)
    .map((s) => s.replace(/^(?:the|and)\s+/i, '').trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s))
    .map((s) => clip(s, 80));
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const list = (value: unknown): readonly string[] => (Array.isArray(value) ? (value as string[]) : []);

const competitorReport: Method = {
  name: 'competitor-report',
  task: ROOT_TASK,
  bind: ({ objective, limits }) => {
    const match = firstMatch(PATTERNS, objective);
    const subjects = match ? splitSubjects(match.subject ?? '') : [];
    const branches = Math.min(MAX_BRANCHES, Math.floor((limits.maxSteps - FIXED_STEPS) / BRANCH_STEPS));
    if (subjects.length === 0 || branches < 1) return undefined;
    return { subject: clip(subjects.join(', '), 200), subjects, branches: String(branches) };
  },
  why: ({ params }) =>
    `the objective asks for competitor research on ${text(params.subject)} (${list(params.subjects).length} ` +
    `subject(s), up to ${text(params.branches)} parallel branches within the step limit)`,
  expand: ({ params }) => {
    const subject = text(params.subject);
    return [
      compound({
        key: 'research',
        task: 'research-competitors',
        title: `Research ${subject}`,
        description: 'Independent research branches, run in parallel.',
        params,
      }),
      primitive({
        key: 'write',
        title: 'Write the competitor report',
        description: 'Compare the subjects side by side: pricing, product, positioning, strengths and weaknesses.',
        target: 'agent:report.writer',
        after: ['research'],
        input: (r) => ({
          objective: expr('$objective'),
          brief: literal(
            clip(
              `Competitor report on ${subject}. One section per subject (pricing, product, customers, recent news), ` +
                'then a comparison table and the implications for us. Cite a source for every claim.',
              2000,
            ),
          ),
          material: expr(r.outputs('research')),
          maxWords: 3000,
        }),
        successCriteria: {
          description: 'A complete report that cites its sources',
          assert: expr('$count($output.sources) >= 1 and $length($output.markdown) >= 500'),
        },
        confidenceThreshold: 0.7,
        estimatedDurationSeconds: 180,
      }),
      primitive({
        key: 'review',
        title: 'Editorial review of the report',
        target: 'human:editor.review',
        after: ['write'],
        input: (r) => ({
          title: expr(`${r.output('write')}.title`),
          markdown: expr(`${r.output('write')}.markdown`),
          checklist: ['Every claim has a source', 'Prices and plans are current', 'No confidential information'],
        }),
        approval: {
          question: clip(`Is the competitor report on ${subject} accurate and ready to publish?`, 2000),
          timeoutSeconds: 172_800,
        },
        estimatedDurationSeconds: 3600,
      }),
      primitive({
        key: 'publish',
        title: 'Publish the report',
        target: 'tool:docs.publish',
        after: ['review'],
        when: (r) => expr(`${r.output('review')}.approved = true`),
        input: (r) => ({
          title: expr(`${r.output('write')}.title`),
          markdown: expr(`${r.output('write')}.markdown`),
          channel: 'competitive-intel',
        }),
        rollbackHint:
          'Unpublish the document with the documentId this step returned, or restore its previous version in the ' +
          'documentation portal.',
        estimatedDurationSeconds: 5,
      }),
    ];
  },
};

/** One branch per competitor; a single subject gets one branch per aspect instead. */
const researchBranches: Method = {
  name: 'parallel-branches',
  task: 'research-competitors',
  expand: ({ params }) => {
    const subjects = list(params.subjects);
    const branches = Number(params.branches) || 1;
    if (subjects.length === 1) {
      const [only = ''] = subjects;
      return ASPECTS.slice(0, branches).map((aspect) =>
        compound({
          key: aspect.key,
          task: 'research-subject',
          title: `Research ${only}: ${aspect.label}`,
          params: {
            subject: only,
            aspects: [aspect.label],
            query: `${only} ${aspect.query}`,
            watch: `${slug(only) || 'subject'}/${aspect.key}`,
          },
        }),
      );
    }
    const kept = subjects.slice(0, branches - 1);
    const rest = subjects.slice(branches - 1);
    const groups = rest.length > 1 ? [...kept, rest.join(', ')] : [...kept, ...rest];
    const keys = uniqueKeys(
      groups.map((name, i) => (i === branches - 1 && rest.length > 1 ? 'others' : name)),
      'subject',
    );
    return groups.map((name, i) => {
      const key = keys[i] ?? `subject-${i + 1}`;
      return compound({
        key,
        task: 'research-subject',
        title: `Research ${name}`,
        params: { subject: name, aspects: ALL_ASPECTS, query: `${name} pricing product customers`, watch: key },
      });
    });
  },
};

const search = (query: string): TaskNode =>
  primitive({
    key: 'search',
    title: clip(`Search the web: ${query}`, 200),
    target: 'tool:web.search',
    input: { query: literal(clip(query, 512)), maxResults: 8, recencyDays: 365 },
    successCriteria: { description: 'At least one result', assert: expr('$count($output.results) >= 1') },
    estimatedDurationSeconds: 5,
  });

const extract = (subject: string, aspects: readonly string[], after: string, pages: (r: Refs) => string) =>
  primitive({
    key: 'extract',
    title: clip(`Extract findings on ${subject}`, 200),
    target: 'agent:research.extract',
    after: [after],
    input: (r) => ({ subject: literal(subject), aspects: [...aspects], pages: expr(pages(r)) }),
    successCriteria: {
      description: 'At least two findings, each with its source',
      assert: expr('$count($output.findings) >= 2'),
    },
    confidenceThreshold: 0.6,
    estimatedDurationSeconds: 60,
  });

const searchFetchExtract: Method = {
  name: 'search-fetch-extract',
  task: 'research-subject',
  expand: ({ params }) => [
    search(text(params.query)),
    primitive({
      key: 'fetch',
      title: clip(`Read the top pages about ${text(params.subject)}`, 200),
      target: 'tool:web.fetch',
      after: ['search'],
      input: (r) => ({ urls: expr(`[${r.output('search')}.results[[0..4]].url]`), maxCharsPerPage: 20_000 }),
      watches: [`web:${text(params.watch)}`],
      estimatedDurationSeconds: 20,
    }),
    extract(text(params.subject), list(params.aspects), 'fetch', (r) => `${r.output('fetch')}.pages`),
  ],
};

/** Without a page fetcher, the search snippets are the pages. */
const searchExtract: Method = {
  name: 'search-snippets-extract',
  task: 'research-subject',
  expand: ({ params }) => [
    search(text(params.query)),
    extract(
      text(params.subject),
      list(params.aspects),
      'search',
      (r) => `[${r.output('search')}.results.{ "url": url, "text": $exists(snippet) ? snippet : title }]`,
    ),
  ],
};

export const researchMethods: readonly Method[] = [
  competitorReport,
  researchBranches,
  searchFetchExtract,
  searchExtract,
];
