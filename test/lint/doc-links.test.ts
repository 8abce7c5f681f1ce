/**
 * The documentation stays inside the repository and stays true to it: every relative Markdown link in README.md,
 * CONTRIBUTING.md and docs/*.md names a file of the repository (and, when it has a #fragment into a Markdown file,
 * one of that file's headings), README.md stays a front door of at most 200 lines, and the plan README.md shows is
 * the example file, valid against the conformance pack's catalog.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { conformanceCatalog } from '../../shared/capabilities/conformance.ts';
import { parseCatalog } from '../../shared/plan/catalog.ts';
import { validate } from '../../shared/plan/validate.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = join(ROOT, 'README.md');
const EXAMPLE_PLAN = join(ROOT, 'docs', 'examples', 'hello.plan.json');
const EXAMPLE_CATALOG = join(ROOT, 'docs', 'examples', 'conformance.catalog.json');

const documents = (): string[] => [
  README,
  join(ROOT, 'CONTRIBUTING.md'),
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(ROOT, 'docs', name)),
];

/** The text outside fenced code blocks and inline code spans, where a `[text](target)` is a link. */
function prose(markdown: string): string {
  const lines: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) lines.push(line);
  }
  return lines.join('\n').replace(/`[^`\n]*`/g, (span) => ' '.repeat(span.length));
}

/** The targets of the document's Markdown links (inline form, an optional "title" after the target). */
function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  for (const match of prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
    if (match[1] !== undefined) targets.push(match[1]);
  return targets;
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (heading?.[1] !== undefined) anchors.add(slug(heading[1]));
  }
  return anchors;
}

interface Broken {
  readonly document: string;
  readonly target: string;
  readonly problem: string;
}

function brokenLinks(): Broken[] {
  const broken: Broken[] = [];
  for (const document of documents()) {
    const name = relative(ROOT, document);
    for (const target of linkTargets(readFileSync(document, 'utf8'))) {
      if (isExternal(target)) continue;
      const [path = '', fragment] = target.split('#', 2);
      const file = path === '' ? document : resolve(path.startsWith('/') ? ROOT : dirname(document), `.${sep}${path}`);
      if (file !== ROOT.replace(/[\\/]$/, '') && !file.startsWith(ROOT)) {
        broken.push({ document: name, target, problem: 'points outside the repository' });
        continue;
      }
      if (!existsSync(file)) {
        broken.push({ document: name, target, problem: `no such file: ${relative(ROOT, file)}` });
        continue;
      }
      if (fragment && file.endsWith('.md') && !anchorsOf(file).has(fragment))
        broken.push({ document: name, target, problem: `no heading #${fragment} in ${relative(ROOT, file)}` });
    }
  }
  return broken;
}

describe('the documentation', () => {
  it('links only to files (and headings) that exist in the repository', () => {
    expect(documents().length).toBeGreaterThan(10);
    expect(brokenLinks()).toEqual([]);
  });

  it('keeps README.md to at most 200 lines', () => {
    const lines = readFileSync(README, 'utf8').replace(/\n$/, '').split('\n').length;
    expect(lines).toBeLessThanOrEqual(200);
  });

  it('shows in README.md the example plan it points at, which is valid against the conformance catalog', () => {
    const readme = readFileSync(README, 'utf8');
    const blocks = [...readme.matchAll(/```json\n([\s\S]*?)\n```/g)].map((match) => match[1] ?? '');
    const example = readFileSync(EXAMPLE_PLAN, 'utf8');
    expect(blocks.map((block) => JSON.parse(block))).toContainEqual(JSON.parse(example));

    const catalogText = readFileSync(EXAMPLE_CATALOG, 'utf8');
    expect(JSON.parse(catalogText)).toEqual(conformanceCatalog());
    const result = validate(JSON.parse(example), parseCatalog(catalogText));
    expect(result.errors).toEqual([]);
  });

  it('finds the links it checks (a link in code is not a link; an external one is not checked)', () => {
    const markdown = [
      'See [a](docs/a.md#x) and [b\nc](../b.md "title") and [web](https://example.com) and `[no](code.md)`.',
      '```',
      '[no](fenced.md)',
      '```',
    ].join('\n');
    expect(linkTargets(markdown)).toEqual(['docs/a.md#x', '../b.md', 'https://example.com']);
    expect(slug("AWS's limits and concurrency, rehearsed")).toBe('awss-limits-and-concurrency-rehearsed');
    expect(slug('`npm start` options')).toBe('npm-start-options');
    expect(slug('6. Events: the outbox')).toBe('6-events-the-outbox');
  });
});
