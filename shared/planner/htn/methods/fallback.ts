/**
 * The fallback for any objective no specific method recognises: gather material (web and knowledge base, in
 * parallel) and write a sourced summary. When the limits leave no room for that, one writing step answers directly,
 * so every objective plans as long as the catalog has a writer.
 */
import { expr } from '../text.ts';
import { compound, type Method, primitive, ROOT_TASK, type TaskNode } from '../types.ts';

const QUERY = expr('$substring($trim($objective), 0, 512)');
const BRIEF =
  'Answer the objective from the material: a short summary first, then the details. Cite a source for every ' +
  'claim and say plainly what the material does not settle.';

const webSearch = (): TaskNode =>
  primitive({
    key: 'web',
    title: 'Search the web for the objective',
    target: 'tool:web.search',
    input: { query: QUERY, maxResults: 10 },
    estimatedDurationSeconds: 5,
  });

const kbSearch = (): TaskNode =>
  primitive({
    key: 'kb',
    title: 'Search the internal knowledge base',
    target: 'tool:kb.search',
    input: { query: QUERY, limit: 10 },
    watches: ['kb:index'],
    estimatedDurationSeconds: 5,
  });

const generalResearch: Method = {
  name: 'research-and-summarize',
  task: ROOT_TASK,
  why: () => 'no specific method recognises the objective: gather material and write a sourced summary',
  expand: () => [
    compound({
      key: 'gather',
      task: 'gather-material',
      title: 'Gather material',
      description: 'Search the web and the knowledge base in parallel.',
    }),
    primitive({
      key: 'summarize',
      title: 'Write a sourced summary',
      target: 'agent:report.writer',
      after: ['gather'],
      input: (r) => ({
        objective: expr('$objective'),
        brief: BRIEF,
        material: expr(r.outputs('gather')),
        maxWords: 1500,
      }),
      successCriteria: {
        description: 'A summary that cites its sources',
        assert: expr('$count($output.sources) >= 1'),
      },
      confidenceThreshold: 0.6,
      estimatedDurationSeconds: 90,
    }),
  ],
};

const directAnswer: Method = {
  name: 'direct-answer',
  task: ROOT_TASK,
  why: () => 'no room (catalog or limits) to gather material first: one writing step answers directly',
  expand: () => [
    primitive({
      key: 'answer',
      title: 'Answer the objective',
      target: 'agent:report.writer',
      input: { objective: expr('$objective'), brief: BRIEF, material: [] },
      confidenceThreshold: 0.6,
      estimatedDurationSeconds: 60,
    }),
  ],
};

const webAndKb: Method = { name: 'web-and-kb', task: 'gather-material', expand: () => [webSearch(), kbSearch()] };
const webOnly: Method = { name: 'web-only', task: 'gather-material', expand: () => [webSearch()] };
const kbOnly: Method = { name: 'kb-only', task: 'gather-material', expand: () => [kbSearch()] };

export const fallbackMethods: readonly Method[] = [generalResearch, directAnswer, webAndKb, webOnly, kbOnly];
