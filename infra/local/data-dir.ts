/**
 * The embedded stack's data directory (`.cairn/` by default): the store (dynalite on LevelDB), the executions'
 * journal and the conformance ledger live there, and one process at a time owns it through a lock file holding
 * its pid. A lock left by a process that no longer exists (a `kill -9`, a power cut) is taken over; a lock held by
 * a live process stops the second one before it opens anything, so the first is never disturbed.
 */
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { CairnError } from '../../shared/errors.ts';

export const DEFAULT_DATA_DIR = '.cairn';
/** The directories this process holds (absolute paths). */
const heldHere = new Set<string>();
export const LOCK_FILE = 'cairn.lock';

/** Another live process owns the data directory. */
export class DataDirLockedError extends CairnError {
  static readonly code = 'E_DATA_DIR_LOCKED';
  constructor(dir: string, pid: number, startedAt: string | undefined) {
    const since = startedAt ? ` since ${startedAt}` : '';
    super(
      DataDirLockedError.code,
      `the data directory ${dir} is in use by another cairn process (pid ${pid}${since}); stop it, or start this one ` +
        'with --data-dir <another directory> or --in-memory',
      { context: { dir, pid }, retryable: false },
    );
  }
}

export interface DataDir {
  /** Absolute path. */
  readonly dir: string;
  /** The owner that died without releasing the directory, when this process took its lock over. */
  readonly tookOverFrom?: number;
  /** Removes the lock (only while it is still this process's). */
  release(): void;
}

interface LockContent {
  readonly pid: number;
  readonly host?: string;
  readonly startedAt?: string;
}

function readLock(path: string): LockContent | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockContent>;
    return typeof parsed.pid === 'number' && Number.isInteger(parsed.pid) && parsed.pid > 0
      ? (parsed as LockContent)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Signal 0 checks existence; EPERM means the process exists but belongs to someone else. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Links `draft` to `lock` (atomic, fails when the lock exists): false when it exists. */
function tryLink(draft: string, lock: string): boolean {
  try {
    linkSync(draft, lock);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Creates the directory and takes its lock, or throws `DataDirLockedError` naming the directory and the owner's pid.
 * The lock is created whole (written to a private file, then linked into place, which fails if one exists), so a
 * reader never sees a half-written lock.
 */
export function openDataDir(path: string, pid: number = process.pid): DataDir {
  const dir = resolve(path);
  // The lock names a process: a second stack in this same process must be refused here, not by the pid check.
  if (pid === process.pid && heldHere.has(dir)) throw new DataDirLockedError(dir, pid, undefined);
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, LOCK_FILE);
  const mine: LockContent = { pid, host: hostname(), startedAt: new Date().toISOString() };
  const draft = join(dir, `${LOCK_FILE}.${pid}`);
  const fd = openSync(draft, 'w');
  try {
    writeSync(fd, `${JSON.stringify(mine)}\n`);
  } finally {
    closeSync(fd);
  }
  let tookOverFrom: number | undefined;
  try {
    if (!tryLink(draft, lock)) {
      const owner = readLock(lock);
      if (owner && owner.pid !== pid && processAlive(owner.pid))
        throw new DataDirLockedError(dir, owner.pid, owner.startedAt);
      // A dead owner (or an unreadable lock): replace it in one step; re-read in case another starter raced.
      renameSync(draft, lock);
      tookOverFrom = owner?.pid;
      const now = readLock(lock);
      if (now?.pid !== pid) throw new DataDirLockedError(dir, now?.pid ?? -1, now?.startedAt);
    }
  } finally {
    try {
      unlinkSync(draft);
    } catch {
      // Renamed into place already.
    }
  }
  if (pid === process.pid) heldHere.add(dir);
  return {
    dir,
    ...(tookOverFrom === undefined ? {} : { tookOverFrom }),
    release() {
      if (pid === process.pid) heldHere.delete(dir);
      if (readLock(lock)?.pid !== pid) return;
      try {
        unlinkSync(lock);
      } catch {
        // Gone already.
      }
    },
  };
}
