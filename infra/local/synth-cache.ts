/**
 * The state machines of the embedded stack, synthesized once and then kept on disk, keyed by the hash of
 * everything the synthesis depends on (synth-sources.ts). A boot with nothing changed reads one JSON file instead
 * of loading aws-cdk-lib and synthesizing the app (seconds). An entry that is missing, for other sources, unreadable
 * or not what this format writes is a miss: the machines are synthesized again and the entry rewritten. When the
 * key cannot be computed for sure, nothing is read or written.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { FUNCTION_KEYS } from '../constructs/state-names.ts';
import type { CairnConfig } from '../stack.ts';
import { canonical, SYNTH_CACHE_FORMAT, type SynthSourcesOptions, synthSources } from './synth-sources.ts';
import { type AslDefinition, type ExtractedMachines, machinesOf } from './template.ts';

/** Under the working directory, beside the embedded stack's data. */
export const DEFAULT_SYNTH_CACHE_DIR = join('.cairn', 'cache');
/** Entries kept (one per config and sources): the newest are kept, the others removed after a write. */
const KEPT_ENTRIES = 8;
const ENTRY = /^state-machines-[0-9a-f]{64}\.json$/;

/** Why the machines were synthesized instead of read. */
export type SynthMissReason =
  /** The cache has no entry at all (a first boot). */
  | 'first'
  /** It has entries, none for these sources and config. */
  | 'changed'
  /** The entry for this key could not be read or is not what this format writes. */
  | 'corrupt'
  /** No cache directory was given. */
  | 'disabled'
  /** The key could not be computed for sure (an import that cannot be followed): nothing is cached. */
  | 'unkeyed';

export type SynthOutcome =
  | { readonly kind: 'cached'; readonly file: string }
  | {
      readonly kind: 'synthesized';
      readonly reason: SynthMissReason;
      /** The entry written, or why none was. */
      readonly file?: string;
      readonly detail?: string;
    };

export interface LoadMachinesOptions extends SynthSourcesOptions {
  /** The cache directory; `false`: always synthesize. Default DEFAULT_SYNTH_CACHE_DIR in the working directory. */
  readonly cacheDir?: string | false;
  /** Told before a synthesis starts (it takes seconds), with why. */
  readonly onSynthesize?: (reason: SynthMissReason) => void;
  /** Synthesizes on a miss (tests: a fake project's); default: the CDK app (synth.ts), loaded only then. */
  readonly synthesize?: (config: Partial<CairnConfig>) => ExtractedMachines | Promise<ExtractedMachines>;
}

export interface LoadedMachines {
  readonly machines: ExtractedMachines;
  readonly outcome: SynthOutcome;
}

const stateSchema = z.looseObject({ Type: z.string() });
const definitionSchema = z.looseObject({ StartAt: z.string(), States: z.record(z.string(), stateSchema) });
const entrySchema = z.strictObject({
  format: z.literal(SYNTH_CACHE_FORMAT),
  key: z.string(),
  /** sha256 of the canonical text of `machines`: a damaged file that still parses is a miss too. */
  digest: z.string(),
  machines: z.strictObject({
    run: definitionSchema,
    step: definitionSchema,
    functionKeys: z.record(z.string(), z.enum(FUNCTION_KEYS)),
  }),
});
type CacheEntry = z.infer<typeof entrySchema>;
type CachedMachines = CacheEntry['machines'];

/** The state machines for this config: from the cache when its sources are unchanged, else synthesized. */
export async function loadStateMachines(
  config: Partial<CairnConfig> = {},
  options: LoadMachinesOptions = {},
): Promise<LoadedMachines> {
  const synthesize = async (reason: SynthMissReason): Promise<ExtractedMachines> => {
    options.onSynthesize?.(reason);
    if (options.synthesize) return options.synthesize(config);
    const { synthesizeStateMachines } = await import('./synth.ts');
    return synthesizeStateMachines(config);
  };
  if (options.cacheDir === false) {
    return { machines: await synthesize('disabled'), outcome: { kind: 'synthesized', reason: 'disabled' } };
  }
  const dir = resolve(options.cacheDir ?? DEFAULT_SYNTH_CACHE_DIR);
  let key: string;
  try {
    key = (await synthSources(config, options)).key;
  } catch (error) {
    const detail = `not cached: ${(error as Error).message}`;
    return { machines: await synthesize('unkeyed'), outcome: { kind: 'synthesized', reason: 'unkeyed', detail } };
  }

  const file = join(dir, `state-machines-${key}.json`);
  const cached = readEntry(file, key);
  if (cached.kind === 'hit') {
    touch(file);
    const { run, step, functionKeys } = cached.machines;
    return {
      machines: machinesOf(run as AslDefinition, step as AslDefinition, functionKeys),
      outcome: { kind: 'cached', file },
    };
  }
  const reason: SynthMissReason = cached.kind === 'corrupt' ? 'corrupt' : entries(dir).length > 0 ? 'changed' : 'first';
  const machines = await synthesize(reason);
  try {
    writeEntry(dir, file, key, machines);
    prune(dir, file);
    return { machines, outcome: { kind: 'synthesized', reason, file } };
  } catch (error) {
    // A cache that cannot be written (a read-only directory) costs the next boot a synthesis, nothing more.
    const detail = `not cached: ${(error as Error).message}`;
    return { machines, outcome: { kind: 'synthesized', reason, detail } };
  }
}

/** Of the canonical text (sorted keys): the schema's parse may put a definition's fields in another order. */
function digestOf(machines: CachedMachines): string {
  return createHash('sha256').update(canonical(machines)).digest('hex');
}

type ReadResult = { readonly kind: 'hit'; readonly machines: CachedMachines } | { readonly kind: 'absent' | 'corrupt' };

function readEntry(file: string, key: string): ReadResult {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? { kind: 'absent' } : { kind: 'corrupt' };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: 'corrupt' };
  }
  const entry = entrySchema.safeParse(parsed);
  if (!entry.success || entry.data.key !== key || digestOf(entry.data.machines) !== entry.data.digest) {
    return { kind: 'corrupt' };
  }
  return { kind: 'hit', machines: entry.data.machines };
}

/** Written beside and renamed into place, so a reader (another boot, a parallel test) never sees half a file. */
function writeEntry(dir: string, file: string, key: string, extracted: ExtractedMachines): void {
  const machines: CachedMachines = {
    run: extracted.run,
    step: extracted.step,
    functionKeys: { ...extracted.functionKeys },
  };
  const entry: CacheEntry = { format: SYNTH_CACHE_FORMAT, key, digest: digestOf(machines), machines };
  mkdirSync(dir, { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(entry)}\n`);
    renameSync(temporary, file);
  } finally {
    rmSync(temporary, { force: true });
  }
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => ENTRY.test(name));
  } catch {
    return [];
  }
}

/** Keeps the newest entries (a hit touches its entry), so changing sources do not fill the directory. */
function prune(dir: string, written: string): void {
  const dated = entries(dir).flatMap((name) => {
    const path = join(dir, name);
    try {
      return [{ path, at: path === written ? Number.POSITIVE_INFINITY : statSync(path).mtimeMs }];
    } catch {
      return [];
    }
  });
  dated.sort((a, b) => b.at - a.at);
  for (const { path } of dated.slice(KEPT_ENTRIES)) rmSync(path, { force: true });
}

function touch(file: string): void {
  try {
    const now = new Date();
    utimesSync(file, now, now);
  } catch {
    // Only the pruning order depends on it.
  }
}

/** The progress line `npm start` prints before a synthesis. */
export function synthesisProgress(reason: SynthMissReason): string {
  const why: Record<SynthMissReason, string> = {
    first: 'first boot, cached afterwards',
    changed: 'the sources changed since the cached synthesis; cached afterwards',
    corrupt: 'the cached synthesis was unreadable; cached afterwards',
    disabled: 'the synthesis cache is off',
    unkeyed: 'the sources cannot be hashed for sure, so nothing is cached',
  };
  return `cairn: synthesizing the state machines (${why[reason]})…`;
}

/**
 * The cache directory of `npm start`: CAIRN_SYNTH_CACHE_DIR (`off` for none), else `cache` in the data directory
 * (`.cairn` by default, and for an in-memory stack too: the cache is not data).
 */
export function synthCacheDirFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  dataDir: string = dirname(DEFAULT_SYNTH_CACHE_DIR),
): string | false {
  const value = env.CAIRN_SYNTH_CACHE_DIR;
  if (value === undefined || value === '') return join(dataDir, 'cache');
  return value === 'off' ? false : value;
}
