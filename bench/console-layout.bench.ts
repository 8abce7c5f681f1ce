/**
 * `npm run bench:console`: what the console's run page costs for a 2,000-step plan (40 layers of 50, each step
 * waiting for two of the layer before). Prints the median time of shaping the overview (synthesized groups, folding,
 * visible graph) and of ELK laying it out, and, for comparison, of ELK laying out one unfolded band alone and (with
 * `--full`, slow) all 2,000 steps at once. ELK runs here in-process (elkjs's bundled build); the page runs it in a
 * Web Worker, so a layout never blocks the page. Then, in headless Chromium (unless `--no-browser`, or without a
 * Chromium): the time to open a box of the 2,000-step overview in the page, and the requests and bytes a minute of
 * an open run page, live and paused (bench/console/run-page.ts; `--seconds N` of watching each, default 60).
 */

import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { type ConsoleStep, withOverviewGroups } from '../console/js/dag/collapse.js';
import { CLUSTER_PADDING, innerGraph } from '../console/js/dag/incremental.js';
import { defaultCollapsed, elkGraph, readLayout, type VisibleGraph, visibleGraph } from '../console/js/dag/model.js';
import { hasChromium, runPageBench } from './console/run-page.ts';

const { values } = parseArgs({
  options: {
    full: { type: 'boolean', default: false },
    'no-browser': { type: 'boolean', default: false },
    seconds: { type: 'string', default: '60' },
    boxes: { type: 'string', default: '10' },
  },
});

const LAYERS = 40;
const WIDTH = 50;
const RUNS = 5;

function plan(): ConsoleStep[] {
  const steps: ConsoleStep[] = [];
  for (let l = 0; l < LAYERS; l++) {
    for (let i = 0; i < WIDTH; i++) {
      const dependsOn = l === 0 ? [] : [`s${l - 1}-${i}`, `s${l - 1}-${(i + 1) % WIDTH}`];
      const status = l < 10 ? 'succeeded' : l === 10 ? 'running' : 'pending';
      steps.push({ id: `s${l}-${i}`, title: `Step ${l}.${i}`, target: 'tool:x', parentId: null, dependsOn, status });
    }
  }
  return steps;
}

async function median(label: string, work: () => unknown): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  const middle = times.sort((a, b) => a - b)[Math.floor(RUNS / 2)] ?? 0;
  console.log(`${label.padEnd(52)} ${middle.toFixed(1).padStart(9)} ms`);
  return middle;
}

// elkjs is CommonJS whose typings declare an ES default export: load it as what it is.
const ELK = createRequire(import.meta.url)(
  'elkjs/lib/elk.bundled.js',
) as typeof import('elkjs/lib/elk.bundled.js').default;
const elk = new ELK();
const layOut = async (graph: VisibleGraph, padding?: string) =>
  readLayout(await elk.layout(elkGraph(graph, padding) as never));
const PADDING = `[top=${CLUSTER_PADDING.top},left=${CLUSTER_PADDING.left},bottom=${CLUSTER_PADDING.bottom},right=${CLUSTER_PADDING.right}]`;

const steps = plan();
const shape = () => {
  const shaped = withOverviewGroups(steps);
  return { shaped, graph: visibleGraph(shaped, defaultCollapsed(shaped)) };
};
const { shaped, graph } = shape();
console.log(`${steps.length} steps → ${graph.nodes.length} folded nodes, ${graph.edges.length} edges`);
await median('overview model (group, fold, visible graph)', shape);
await median('ELK layout of the overview', () => layOut(graph));
const collapsed = defaultCollapsed(shaped);
collapsed.delete(graph.nodes[5]?.id ?? '');
const opened = visibleGraph(shaped, collapsed);
await median(`ELK layout with one band unfolded (${opened.nodes.length} nodes)`, () => layOut(opened));
const band = innerGraph(opened, graph.nodes[5]?.id ?? '');
await median(`ELK layout of that band alone (${band.nodes.length} nodes)`, () => layOut(band, PADDING));
if (values.full) {
  const full = visibleGraph(steps, new Set());
  const started = performance.now();
  await layOut(full);
  console.log(
    `${'ELK layout of all 2,000 steps (once)'.padEnd(52)} ${(performance.now() - started).toFixed(1).padStart(9)} ms`,
  );
}

if (values['no-browser']) process.exit(0);
if (!hasChromium()) {
  console.log('no Chromium (apt-get install chromium, or CHROMIUM_PATH): the page figures are skipped');
  process.exit(0);
}
await runPageBench({ seconds: Number(values.seconds), boxes: Number(values.boxes) });
