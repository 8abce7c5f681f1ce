/**
 * `npm start` as a child process, driven through its HTTP API as a user would (bench:scale): started in memory with
 * the conformance pack and the flags given, sampled for its peak resident memory (VmHWM, Linux), and stopped with
 * SIGTERM, after which it prints the throttles each quota absorbed ("cairn: throttles absorbed: kind n, ...").
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface StackProcess {
  readonly url: string;
  readonly token: string;
  /** Peak resident memory so far (MB; NaN off Linux). */
  peakRssMb(): number;
  /** Stops the stack; resolves with the throttles it reports absorbed, by kind. */
  stop(): Promise<Record<string, number>>;
}

const vmHwmMb = (child: ChildProcess): number => {
  try {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    return Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024);
  } catch {
    return Number.NaN;
  }
};

/** `kind n, kind n` (or `none`) as counts. */
export function parseThrottles(line: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const part of line.split(',')) {
    const match = /^\s*([\w.]+)\s+(\d+)\s*$/.exec(part);
    if (match) counts[match[1] as string] = Number(match[2]);
  }
  return counts;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export async function startStackProcess(
  flags: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<StackProcess> {
  const port = 3000 + Math.floor(Math.random() * 2000);
  const token = `bench-scale-${port}`;
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    ['bin/start.js', '--no-demo', '--conformance', '--in-memory', '--quiet', '--port', String(port), ...flags],
    { env: { ...process.env, ...env, CAIRN_API_TOKEN: token }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let peak = 0;
  const sample = () => {
    peak = Math.max(peak, vmHwmMb(child) || 0);
  };
  const sampler = setInterval(sample, 500);
  await until(
    'the stack answering',
    async () => ((await fetch(`${url}/health`)).status === 200 ? true : undefined),
    // A first boot synthesizes the state machines (CDK), which takes minutes on a busy two-core machine.
    600_000,
  );
  return {
    url,
    token,
    peakRssMb: () => {
      sample();
      return peak;
    },
    async stop() {
      sample();
      clearInterval(sampler);
      child.kill('SIGTERM');
      await exited;
      const line = /cairn: throttles absorbed: (.*)/.exec(output)?.[1] ?? '';
      return parseThrottles(line);
    },
  };
}
