import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirLockedError, LOCK_FILE, openDataDir, processAlive } from '../../../infra/local/data-dir.ts';

/** A pid that existed and is gone: a child that ran and exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  const pid = Number(child.stdout);
  if (!Number.isInteger(pid) || processAlive(pid)) throw new Error('could not find a dead pid');
  return pid;
}

describe('openDataDir', () => {
  const dirs: string[] = [];
  const scratch = () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-data-dir-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('creates the directory and a lock naming this process, and removes the lock on release', () => {
    const dir = join(scratch(), 'nested', '.cairn');
    const data = openDataDir(dir);
    const lock = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as { pid: number };
    expect(lock.pid).toBe(process.pid);
    data.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('refuses a directory whose lock names a live process, with the code, the directory and the pid', () => {
    const dir = scratch();
    // The parent of this test process is alive for as long as the test runs.
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: process.ppid, startedAt: '2026-01-01T00:00:00.000Z' }));
    let error: unknown;
    try {
      openDataDir(dir);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DataDirLockedError);
    expect((error as DataDirLockedError).name).toBe('E_DATA_DIR_LOCKED');
    expect((error as Error).message).toContain(dir);
    expect((error as Error).message).toContain(`pid ${process.ppid}`);
    // The owner's lock is left as it was.
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.ppid);
  });

  it('refuses a second open in the same process while the first holds the directory', () => {
    const dir = scratch();
    const data = openDataDir(dir);
    expect(() => openDataDir(dir)).toThrow(DataDirLockedError);
    data.release();
    openDataDir(dir).release();
  });

  it('takes over a lock left by a process that no longer exists', () => {
    const dir = scratch();
    const gone = deadPid();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: gone }));
    const data = openDataDir(dir);
    expect(data.tookOverFrom).toBe(gone);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    data.release();
  });

  it('takes over a lock it cannot read (a torn write)', () => {
    const dir = scratch();
    writeFileSync(join(dir, LOCK_FILE), '{"pid": 12');
    const data = openDataDir(dir);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    data.release();
  });
});
