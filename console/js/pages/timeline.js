/**
 * A run as a Gantt chart: one row per step (dependencies first). The dashed bar is the plan (earliest start by the
 * estimates, `estimatedDurationSeconds` long); solid bars are attempts (each retry its own bar, colored by outcome);
 * hatched bars are waits for a person. Rows on the critical path are highlighted.
 */
import { get } from '../api.js';
import { formatDuration, formatTime, h, replaceChildren, STATUS_MARKS, s, statusLabel, truncate } from '../dom.js';
import { QUIET_MS } from '../feed/run-feed.js';
import { runSession } from '../feed/run-session.js';
import { runHeader } from './run-header.js';

const LABEL = 250;
const ROW = 32;
const TOP = 30;
const NICE = [1, 2, 5];

function tickStep(spanSeconds, widthPx) {
  const wanted = spanSeconds / Math.max(2, Math.floor(widthPx / 90));
  let magnitude = 10 ** Math.floor(Math.log10(Math.max(wanted, 0.001)));
  for (;;) {
    for (const n of NICE) if (n * magnitude >= wanted) return n * magnitude;
    magnitude *= 10;
  }
}

const secondsBetween = (from, to) => (Date.parse(to) - Date.parse(from)) / 1000;

/** `fitActual`: scale to what happened and clip the planned bars, for runs far faster or slower than planned. */
function chart(timeline, width, fitActual) {
  const t0 = timeline.startedAt;
  const now = timeline.finishedAt ?? timeline.now;
  let end = Math.max(secondsBetween(t0, now), fitActual ? 0.001 : timeline.criticalPath.planned.seconds, 0.001);
  for (const row of timeline.rows) {
    if (row.estimatedSeconds && !fitActual) end = Math.max(end, row.plannedStartSeconds + row.estimatedSeconds);
    for (const a of row.attempts) end = Math.max(end, secondsBetween(t0, a.finishedAt ?? now));
  }
  const plotWidth = Math.max(320, width - LABEL - 24);
  const scale = plotWidth / end;
  const x = (seconds) => LABEL + Math.max(0, seconds) * scale;
  const critical = new Set(timeline.criticalPath.actual.steps);
  const plannedCritical = new Set(timeline.criticalPath.planned.steps);
  const height = TOP + timeline.rows.length * ROW + 8;
  const step = tickStep(end, plotWidth);
  const ticks = [];
  for (let t = 0; t <= end + 1e-9; t += step) ticks.push(t);

  const bar = (from, to, y, barHeight, cls, title) =>
    s(
      'rect',
      { class: cls, x: x(from), y, width: Math.max(2, (to - from) * scale), height: barHeight, rx: 2 },
      s('title', null, title),
    );

  const rows = timeline.rows.map((row, i) => {
    const y = TOP + i * ROW;
    const retries = row.attempts.length;
    return s(
      'g',
      { class: ['row', critical.has(row.id) ? 'critical' : null], dataset: { stepId: row.id } },
      s('rect', { class: 'row-bg', x: 0, y, width: LABEL + plotWidth + 16, height: ROW }),
      s(
        'g',
        { 'clip-path': 'url(#plot)' },
        s(
          'text',
          { class: 'row-label', x: 8, y: y + 20 },
          `${critical.has(row.id) ? '◆ ' : ''}${truncate(row.title, 26)}`,
          s('title', null, `${row.title} (${row.id}) — ${statusLabel(row.status)}`),
        ),
        s(
          'text',
          { class: 'row-status', x: LABEL - 8, y: y + 20, 'text-anchor': 'end' },
          STATUS_MARKS[row.status] ?? '',
        ),
        row.estimatedSeconds
          ? bar(
              row.plannedStartSeconds,
              row.plannedStartSeconds + row.estimatedSeconds,
              y + 4,
              8,
              ['planned', plannedCritical.has(row.id) ? 'planned-critical' : null].filter(Boolean).join(' '),
              `planned: from +${formatDuration(row.plannedStartSeconds * 1000)}, ${formatDuration(row.estimatedSeconds * 1000)}`,
            )
          : null,
        row.attempts.map((a) => {
          const from = secondsBetween(t0, a.startedAt);
          const to = secondsBetween(t0, a.finishedAt ?? now);
          const label = `attempt ${a.attempt} (generation ${a.generation}): ${a.outcome}, ${formatDuration((to - from) * 1000)}${a.error ? ` — ${a.error.code}: ${a.error.message}` : ''}`;
          return s(
            'g',
            null,
            bar(from, to, y + 14, 13, `attempt outcome-${a.outcome}${a.attempt > 1 ? ' retry' : ''}`, label),
            a.attempt > 1 ? s('text', { class: 'retry-mark', x: x(from) + 2, y: y + 11 }, `↻${a.attempt}`) : null,
          );
        }),
        row.waits.map((w) => {
          const from = secondsBetween(t0, w.from);
          const to = secondsBetween(t0, w.to ?? now);
          return bar(
            from,
            to,
            y + 14,
            13,
            'wait',
            `waiting for a person (${w.kind}): ${w.status}, ${formatDuration((to - from) * 1000)}, deadline ${formatTime(w.deadline)}`,
          );
        }),
      ),
      retries > 1 ? s('title', null, `${retries} attempts`) : null,
    );
  });

  return s(
    'svg',
    {
      class: 'gantt',
      width: LABEL + plotWidth + 16,
      height,
      role: 'img',
      'aria-label': `Timeline of ${timeline.rows.length} steps`,
    },
    s(
      'defs',
      null,
      s(
        'pattern',
        { id: 'hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
        s('rect', { width: 6, height: 6, class: 'hatch-bg' }),
        s('line', { x1: 0, y1: 0, x2: 0, y2: 6, class: 'hatch-line' }),
      ),
    ),
    ticks.map((t) =>
      s(
        'g',
        { class: 'tick' },
        s('line', { x1: x(t), x2: x(t), y1: TOP - 6, y2: height }),
        s('text', { x: x(t) + 3, y: TOP - 10 }, formatDuration(t * 1000)),
      ),
    ),
    rows,
    timeline.finishedAt
      ? null
      : s('line', {
          class: 'now',
          x1: x(secondsBetween(t0, now)),
          x2: x(secondsBetween(t0, now)),
          y1: TOP - 6,
          y2: height,
        }),
  );
}

function summary(timeline) {
  const { actual, planned } = timeline.criticalPath;
  return h(
    'p',
    { class: 'critical-summary' },
    h('strong', null, 'Critical path: '),
    actual.steps.length ? `${actual.steps.join(' → ')} (${formatDuration(actual.seconds * 1000)} measured)` : '—',
    h('br'),
    h(
      'span',
      { class: 'muted' },
      `Planned: ${planned.steps.length ? `${planned.steps.join(' → ')} (${formatDuration(planned.seconds * 1000)} estimated)` : 'no estimates'}`,
    ),
  );
}

const LEGEND = [
  ['planned', 'planned (estimate)'],
  ['attempt outcome-succeeded', 'attempt succeeded'],
  ['attempt outcome-failed', 'attempt failed'],
  ['attempt outcome-running', 'running'],
  ['wait', 'waiting for a person'],
  ['crit', '◆ critical path'],
];

export function timelinePage(main, { runId }) {
  const header = runHeader(runId, '/timeline', { onActed: () => session.refresh() });
  const area = h('div', { class: 'gantt-area', id: 'timeline' }, h('p', { class: 'muted' }, 'Loading…'));
  const info = h('div');
  const fit = h('input', { type: 'checkbox', id: 'fit-actual' });
  replaceChildren(
    main,
    header.element,
    h(
      'section',
      { class: 'timeline', 'aria-label': 'Timeline' },
      info,
      h('label', { class: 'fit' }, fit, ' Scale to the actual run (planned bars clipped)'),
      area,
      h(
        'ul',
        { class: 'legend' },
        LEGEND.map(([cls, label]) => h('li', null, h('span', { class: `swatch ${cls}` }), label)),
      ),
    ),
  );
  let stopped = false;
  let timeline;
  let fetched = 0;
  const draw = () => {
    if (!timeline) return;
    replaceChildren(info, summary(timeline));
    replaceChildren(
      area,
      timeline.rows.length
        ? chart(timeline, area.clientWidth || main.clientWidth, fit.checked)
        : h('p', { class: 'muted' }, 'No steps yet.'),
    );
  };
  fit.addEventListener('change', draw);
  // The timeline is one answer for the whole run: read again when the run moved, at most every QUIET_MS.
  const load = async () => {
    fetched = Date.now();
    const answer = await get(`/runs/${encodeURIComponent(runId)}/timeline`);
    if (stopped) return;
    timeline = answer;
    draw();
  };
  const session = runSession(runId, {
    onError: (error) =>
      replaceChildren(area, h('p', { class: 'error', role: 'alert' }, `Could not load the timeline: ${error.message}`)),
    onChange: ({ run, reason }) => {
      header.update(run);
      if (reason === 'load' || Date.now() - fetched >= QUIET_MS) {
        load().catch((error) =>
          replaceChildren(
            area,
            h('p', { class: 'error', role: 'alert' }, `Could not load the timeline: ${error.message}`),
          ),
        );
      }
    },
  });
  void session.open();
  return {
    dispose() {
      stopped = true;
      session.stop();
    },
  };
}
