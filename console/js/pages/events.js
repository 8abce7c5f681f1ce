/**
 * A run's audit log: every event, oldest first, filterable by type and by step, with its detail as a tree. The log
 * is what the run session reads anyway (feed/run-feed.js), so this view costs no request of its own and grows as
 * events come in.
 */
import { formatTime, h, replaceChildren } from '../dom.js';
import { runSession } from '../feed/run-session.js';
import { jsonTree } from '../ui/json-tree.js';
import { runHeader } from './run-header.js';

const SHOWN = 500;

export function eventsPage(main, { runId, query }) {
  const header = runHeader(runId, '/events', { onActed: () => session.refresh() });
  const typeFilter = h('select', { id: 'event-type' }, h('option', { value: '' }, 'All types'));
  const stepFilter = h('input', {
    type: 'search',
    id: 'event-step',
    list: 'event-steps',
    placeholder: 'Step id',
    value: query.get('step') ?? '',
  });
  const stepList = h('datalist', { id: 'event-steps' });
  const list = h('ol', { class: 'event-list', id: 'event-list' });
  const note = h('p', { class: 'muted', role: 'status', id: 'events-note' });
  replaceChildren(
    main,
    header.element,
    h(
      'section',
      { class: 'events', 'aria-label': 'Events' },
      h(
        'div',
        { class: 'filters' },
        h('label', null, 'Type ', typeFilter),
        h('label', null, 'Step ', stepFilter, stepList),
      ),
      note,
      list,
    ),
  );
  if (query.get('type'))
    typeFilter.append(h('option', { value: query.get('type'), selected: true }, query.get('type')));
  typeFilter.addEventListener('change', () => render());
  stepFilter.addEventListener('input', () => render());

  let events = [];
  let knownTypes = '';
  const row = (event) =>
    h(
      'li',
      { class: 'event', dataset: { type: event.type, stepId: event.stepId ?? '' } },
      h(
        'details',
        null,
        h(
          'summary',
          null,
          h('time', { datetime: event.at }, formatTime(event.at)),
          ' ',
          h('strong', { class: 'event-type' }, event.type),
          event.stepId ? [' ', h('span', { class: 'mono' }, event.stepId)] : null,
          event.generation ? h('span', { class: 'muted' }, ` g${event.generation}`) : null,
        ),
        jsonTree(event.detail, `${event.type} detail`),
      ),
    );

  function render() {
    const types = [...new Set(events.map((e) => e.type))].sort();
    if (types.join() !== knownTypes) {
      knownTypes = types.join();
      const chosen = typeFilter.value;
      replaceChildren(
        typeFilter,
        h('option', { value: '' }, 'All types'),
        types.map((t) => h('option', { value: t, selected: t === chosen }, t)),
      );
      replaceChildren(
        stepList,
        [...new Set(events.map((e) => e.stepId).filter(Boolean))].map((id) => h('option', { value: id })),
      );
    }
    const step = stepFilter.value.trim();
    const wanted = events.filter(
      (e) => (!typeFilter.value || e.type === typeFilter.value) && (!step || (e.stepId ?? '').includes(step)),
    );
    replaceChildren(list, wanted.slice(-SHOWN).map(row));
    note.textContent =
      wanted.length > SHOWN
        ? `${wanted.length} events; the newest ${SHOWN} shown.`
        : `${wanted.length} of ${events.length} events.`;
  }

  let shown = 0;
  const session = runSession(runId, {
    onError: (error) => {
      note.textContent = `Could not load the events: ${error.message}`;
    },
    onChange: (change) => {
      header.update(change.run);
      events = change.events;
      if (events.length !== shown) {
        shown = events.length;
        render();
      }
    },
  });
  void session.open();
  return { dispose: () => session.stop() };
}
