/**
 * `npm run bench:boot`: how long `npm start -- --no-demo` takes from launch to its first HTTP answer (`GET /health`),
 * cold (an empty synthesis cache: the CDK app is synthesized) and cached (the state machines read from the cache),
 * and their ratio. Each round launches two child processes the way a user does, on one fresh cache directory
 * (CAIRN_SYNTH_CACHE_DIR); the medians are printed. Target: cached ≤ 5 s. Wall-clock time depends on what else
 * the machine runs, so the load average is printed, and (on Linux) the CPU time the launched processes used until
 * the answer, which does not. BENCH_BOOT_ROUNDS sets the rounds
 * (default 2: about a minute).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROUNDS = Math.max(1, Number(process.env.BENCH_BOOT_ROUNDS ?? 2));
const TARGET_CACHED_MS = 5_000;
const LAUNCH_TIMEOUT_MS = 120_000;
const POLL_MS = 20;
/**
 * With persistence on disk (`--in-memory` exists), a bench must not take the working directory's data directory
 * (and its lock) from a running `npm start`.
 */
const IN_MEMORY = readFileSync(join(ROOT, 'infra', 'local', 'main.ts'), 'utf8').includes("'in-memory'");

interface Boot {
  readonly ms: number;
  /** CPU time of the launched processes (npm, node, their children) until the answer; undefined off Linux. */
  readonly cpuMs: number | undefined;
  readonly output: string;
}

/** clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on every Linux build that matters). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time used so far by the processes of a process group, their waited-for children included, from /proc: on a
 * shared machine, the part of a boot that does not depend on what else runs.
 */
function groupCpuMs(group: number): number | undefined {
  if (!existsSync('/proc/self/stat')) return undefined;
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // After `pid (comm) `: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) !== group) continue;
    ticks += [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0);
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function answers(url: string): Promise<boolean> {
  try {
    await (await fetch(url, { signal: AbortSignal.timeout(1_000) })).arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve();
    child.once('exit', () => resolve());
    // npm and the node it starts are one process group, started detached for this.
    process.kill(-child.pid, 'SIGTERM');
    setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        process.kill(-child.pid, 'SIGKILL');
      }
    }, 10_000).unref();
  });
}

/** Launches `npm start -- --no-demo` on a free port; resolves at its first HTTP answer. */
async function boot(cacheDir: string): Promise<Boot> {
  const port = await freePort();
  const args = ['start', '--', '--no-demo', '--quiet', '--port', String(port), ...(IN_MEMORY ? ['--in-memory'] : [])];
  const started = performance.now();
  const child = spawn('npm', args, {
    cwd: ROOT,
    env: { ...process.env, CAIRN_SYNTH_CACHE_DIR: cacheDir, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  try {
    const url = `http://127.0.0.1:${port}/health`;
    while (!(await answers(url))) {
      if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`);
      if (performance.now() - started > LAUNCH_TIMEOUT_MS) throw new Error(`no answer within ${LAUNCH_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const ms = performance.now() - started;
    return { ms, cpuMs: child.pid === undefined ? undefined : groupCpuMs(child.pid), output };
  } finally {
    await stop(child);
  }
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};
const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const cpu = (ms: number | undefined): string => (ms === undefined ? '' : ` (CPU ${seconds(ms)})`);
const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  console.log(`boot: npm start -- --no-demo${IN_MEMORY ? ' --in-memory' : ''}, launch → first HTTP answer`);
  console.log(`      ${ROUNDS} round(s), load average before: ${load()}`);
  const cold: number[] = [];
  const cached: number[] = [];
  const coldCpu: number[] = [];
  const cachedCpu: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const cacheDir = mkdtempSync(join(tmpdir(), 'cairn-bench-boot-'));
    try {
      const first = await boot(cacheDir);
      if (!first.output.includes('first boot, cached afterwards')) {
        throw new Error(`the cold boot did not say it synthesizes:\n${first.output}`);
      }
      const second = await boot(cacheDir);
      if (second.output.includes('synthesizing')) throw new Error(`the cached boot synthesized:\n${second.output}`);
      cold.push(first.ms);
      cached.push(second.ms);
      if (first.cpuMs !== undefined) coldCpu.push(first.cpuMs);
      if (second.cpuMs !== undefined) cachedCpu.push(second.cpuMs);
      console.log(
        `  round ${round}: cold ${seconds(first.ms)}${cpu(first.cpuMs)}, cached ${seconds(second.ms)}${cpu(second.cpuMs)}`,
      );
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  }
  const coldMs = median(cold);
  const cachedMs = median(cached);
  console.log(
    `  median: cold ${seconds(coldMs)}, cached ${seconds(cachedMs)}, cold/cached ${(coldMs / cachedMs).toFixed(1)}×`,
  );
  if (coldCpu.length > 0 && cachedCpu.length > 0) {
    const [coldCpuMs, cachedCpuMs] = [median(coldCpu), median(cachedCpu)];
    console.log(
      `  median CPU time: cold ${seconds(coldCpuMs)}, cached ${seconds(cachedCpuMs)}, cold/cached ${(coldCpuMs / cachedCpuMs).toFixed(1)}×`,
    );
  }
  const verdict = cachedMs <= TARGET_CACHED_MS ? 'met' : 'MISSED';
  console.log(`  target cached ≤ ${seconds(TARGET_CACHED_MS)}: ${verdict} (load average after: ${load()})`);
}

await main();
