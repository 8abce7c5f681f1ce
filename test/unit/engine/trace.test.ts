import { describe, expect, it } from 'vitest';
import {
  appendAndRetain,
  formatTraceEntry,
  MAX_TRACE_ENTRIES,
  MAX_TRACE_TEXT,
  retainTrace,
  traceEntry,
} from '../../../shared/engine/trace.ts';

const at = '2025-01-01T00:00:00.000Z';
const trace = [traceEntry('plan', 'planned', at), traceEntry('exec', 'ran', at), traceEntry('judge', 'passed', at)];

describe('traceEntry', () => {
  it('stamps the time and clips long text', () => {
    expect(traceEntry('exec', 'x', new Date(at))).toEqual({ kind: 'exec', at, text: 'x' });
    expect(traceEntry('exec', 'y'.repeat(MAX_TRACE_TEXT + 10), at).text).toHaveLength(MAX_TRACE_TEXT);
  });

  it('formats with its tag', () => {
    expect(formatTraceEntry(traceEntry('fail', 'boom', at))).toBe(`[fail] ${at} boom`);
  });
});

describe('retainTrace', () => {
  it('keeps only the last entry of a succeeded step under last retention', () => {
    expect(retainTrace(trace, 'succeeded', 'last')).toEqual([trace[2]]);
  });

  it('keeps the full trace of a failed step under any retention', () => {
    expect(retainTrace(trace, 'failed', 'last')).toEqual(trace);
    expect(retainTrace(trace, 'failed', 'full')).toEqual(trace);
  });

  it('keeps the full trace of a succeeded step under full retention', () => {
    expect(retainTrace(trace, 'succeeded', 'full')).toEqual(trace);
  });

  it('caps a trace, dropping the oldest entries', () => {
    const long = Array.from({ length: MAX_TRACE_ENTRIES + 5 }, (_, i) => traceEntry('exec', `#${i}`, at));
    const kept = retainTrace(long, 'failed', 'full');
    expect(kept).toHaveLength(MAX_TRACE_ENTRIES);
    expect(kept[0]?.text).toBe('#5');
  });

  it('appends before retaining', () => {
    const done = traceEntry('judge', 'done', at);
    expect(appendAndRetain(trace, [done], 'succeeded', 'last')).toEqual([done]);
    expect(appendAndRetain(trace, [done], 'failed', 'last')).toEqual([...trace, done]);
  });
});
