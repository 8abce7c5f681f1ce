/**
 * EventBridge event-pattern matching, so the in-process bus routes events with the same rule patterns that CDK
 * deploys. Supported: exact values (strings, numbers, booleans, null), `prefix`, `suffix`, `equals-ignore-case`,
 * `wildcard`, `anything-but` (a value, a list, or `{prefix}`/`{suffix}`), `exists`, `numeric` ranges and `$or`.
 * Semantics follow EventBridge: every field named in the pattern must match; an array in the pattern is a set of
 * alternatives; an array in the event matches when any of its elements does.
 */
export type EventPattern = { readonly [key: string]: EventPattern | readonly PatternValue[] | readonly EventPattern[] };
export type PatternValue = string | number | boolean | null | Readonly<Record<string, unknown>>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function matchesPattern(event: unknown, pattern: EventPattern): boolean {
  if (!isRecord(event)) return false;
  for (const [key, rule] of Object.entries(pattern)) {
    if (key === '$or') {
      const alternatives = rule as readonly EventPattern[];
      if (!alternatives.some((alt) => matchesPattern(event, alt))) return false;
      continue;
    }
    if (Array.isArray(rule)) {
      if (!matchesField(event, key, rule as readonly PatternValue[])) return false;
    } else if (isRecord(rule)) {
      if (!matchesPattern(event[key], rule as EventPattern)) return false;
    } else {
      return false;
    }
  }
  return true;
}

function matchesField(event: Record<string, unknown>, key: string, matchers: readonly PatternValue[]): boolean {
  const present = Object.hasOwn(event, key);
  const value = event[key];
  // `exists` is about presence, not about the value, and ignores the array expansion below.
  for (const m of matchers) {
    if (isRecord(m) && 'exists' in m) {
      const wantsPresent = m.exists === true;
      const leafPresent = present && !isRecord(value);
      if (wantsPresent === leafPresent) return true;
    }
  }
  // EventBridge: apart from `exists: false`, no matcher (not even anything-but) matches a missing field.
  if (!present) return false;
  const values = Array.isArray(value) ? value : [value];
  return values.some((v) => matchers.some((m) => matchesValue(v, m)));
}

function matchesValue(value: unknown, matcher: PatternValue): boolean {
  if (!isRecord(matcher)) return value === matcher;
  if ('exists' in matcher) return false;
  if ('prefix' in matcher) return typeof value === 'string' && affix(value, matcher.prefix, 'prefix');
  if ('suffix' in matcher) return typeof value === 'string' && affix(value, matcher.suffix, 'suffix');
  if ('equals-ignore-case' in matcher)
    return (
      typeof value === 'string' &&
      typeof matcher['equals-ignore-case'] === 'string' &&
      value.toLowerCase() === matcher['equals-ignore-case'].toLowerCase()
    );
  if ('wildcard' in matcher) return typeof value === 'string' && wildcard(value, String(matcher.wildcard));
  if ('anything-but' in matcher) return anythingBut(value, matcher['anything-but']);
  if ('numeric' in matcher) return numeric(value, matcher.numeric);
  return false;
}

function affix(value: string, spec: unknown, kind: 'prefix' | 'suffix'): boolean {
  if (typeof spec === 'string') return kind === 'prefix' ? value.startsWith(spec) : value.endsWith(spec);
  if (isRecord(spec) && typeof spec['equals-ignore-case'] === 'string') {
    const v = value.toLowerCase();
    const s = spec['equals-ignore-case'].toLowerCase();
    return kind === 'prefix' ? v.startsWith(s) : v.endsWith(s);
  }
  return false;
}

function anythingBut(value: unknown, spec: unknown): boolean {
  if (Array.isArray(spec)) return !spec.includes(value);
  if (isRecord(spec)) {
    if ('prefix' in spec) return typeof value === 'string' && !affix(value, spec.prefix, 'prefix');
    if ('suffix' in spec) return typeof value === 'string' && !affix(value, spec.suffix, 'suffix');
    if ('equals-ignore-case' in spec) {
      const list = Array.isArray(spec['equals-ignore-case'])
        ? spec['equals-ignore-case']
        : [spec['equals-ignore-case']];
      return (
        typeof value === 'string' && !list.some((s) => typeof s === 'string' && s.toLowerCase() === value.toLowerCase())
      );
    }
    return false;
  }
  return value !== spec;
}

function numeric(value: unknown, spec: unknown): boolean {
  if (typeof value !== 'number' || !Array.isArray(spec) || spec.length % 2 !== 0) return false;
  for (let i = 0; i < spec.length; i += 2) {
    const op = spec[i];
    const bound = spec[i + 1];
    if (typeof bound !== 'number') return false;
    const ok =
      op === '='
        ? value === bound
        : op === '<'
          ? value < bound
          : op === '<='
            ? value <= bound
            : op === '>'
              ? value > bound
              : op === '>='
                ? value >= bound
                : false;
    if (!ok) return false;
  }
  return true;
}

function wildcard(value: string, spec: string): boolean {
  const escaped = spec
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${escaped}$`, 's').test(value);
}
