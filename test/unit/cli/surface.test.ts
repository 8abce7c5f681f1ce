import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { FetchLike } from '../../../shared/api/client.ts';
import { createEventsCommand } from '../../../shared/cli/commands/events.ts';
import { createStatusCommand } from '../../../shared/cli/commands/status.ts';
import { main } from '../../../shared/cli/main.ts';
import { echoStep, harness, planOf, seedRun, stepRecord } from '../api/harness.ts';
import { capturing, served } from './served.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { version: string; engines: { node: string } };
const text = (lines: string[]): string => lines.join('');
const noWait = { sleep: async () => {} };
const busy = () =>
  new Response(JSON.stringify({ error: { code: 'E_UNAVAILABLE', message: 'busy' } }), {
    status: 503,
    headers: { 'content-type': 'application/json' },
  });

/** A fetch that answers 503 to the first `failures` requests whose URL matches, and passes the rest on. */
function flaky(pattern: RegExp, failures: number): FetchLike {
  let left = failures;
  return async (url, init) => (pattern.test(url) && left-- > 0 ? busy() : fetch(url, init));
}

async function completeRun() {
  const h = await harness();
  await seedRun(h, 'run-1', planOf([echoStep('a')]), [stepRecord('run-1', 'a', { status: 'succeeded' })], {
    status: 'complete',
  });
  const at = '2030-01-01T00:00:01.000Z';
  const finished = { runId: 'run-1', state: 'complete', reason: 'all steps succeeded' };
  await h.store.recordEvents([
    {
      id: '0b0c7e0e-9f3c-4d2a-8a43-52c1e5f5d2a1',
      runId: 'run-1',
      at,
      events: [{ type: 'RunFinished', detail: finished }],
    },
  ]);
  return h;
}

describe('cairn --version', () => {
  it("prints package.json's version and exits 0", async () => {
    const io = capturing({});
    expect(await main(['--version'], io)).toBe(0);
    expect(text(io.out)).toBe(`${pkg.version}\n`);
  });
});

describe('did you mean', () => {
  it('suggests the nearest command for an unknown one, and exits 2', async () => {
    const io = capturing({});
    expect(await main(['stauts', 'r'], io)).toBe(2);
    expect(text(io.err)).toContain('unknown command "stauts" (did you mean "status"?)');
  });

  it('suggests the nearest flag for an unknown one, and exits 2', async () => {
    const io = capturing({});
    expect(await main(['runs', '--limt', '3'], io)).toBe(2);
    expect(text(io.err)).toContain('unknown option "--limt" (did you mean "--limit"?)');
  });
});

describe('cairn --help', () => {
  it('lists the new commands and documents the exit codes', async () => {
    const io = capturing({});
    expect(await main(['--help'], io)).toBe(0);
    for (const word of ['runs', 'cancel', 'events', 'step', 'completion', '--version'])
      expect(text(io.out)).toContain(word);
    expect(text(io.out)).toMatch(/4 +unauthorized or forbidden/);
    expect(text(io.out)).toMatch(/5 +the API could not be reached/);
  });
});

describe('cairn completion', () => {
  it('prints a bash script that bash accepts, with the commands and their flags', async () => {
    const io = capturing({});
    expect(await main(['completion', 'bash'], io)).toBe(0);
    const script = text(io.out);
    expect(script).toContain("runs) opts='--status --limit --all --json --api --token'");
    expect(script).toContain('complete -o filenames -F _cairn cairn');
    expect(spawnSync('bash', ['-n'], { input: script }).status).toBe(0);
  });

  it('prints zsh and fish scripts too, and refuses another shell with exit 2', async () => {
    const zsh = capturing({});
    const fish = capturing({});
    const other = capturing({});
    expect(await main(['completion', 'zsh'], zsh)).toBe(0);
    expect(await main(['completion', 'fish'], fish)).toBe(0);
    expect(await main(['completion', 'tcsh'], other)).toBe(2);
    expect(text(zsh.out)).toContain('#compdef cairn');
    expect(text(zsh.out)).toContain("'events:print a run'\\''s audit log");
    expect(text(fish.out)).toContain("complete -c cairn -n '__fish_seen_subcommand_from cancel' -l compensate");
  });
});

describe('--watch through an API that is busy for a while', () => {
  it('keeps watching, says so on stderr, and exits as the run ended', async () => {
    const io = await served(await completeRun());
    const status = createStatusCommand({ fetch: flaky(/\/runs\/run-1$/, 6), transport: noWait, steady: noWait });

    const code = await status(['run-1', '--watch'], io);

    expect(code).toBe(0);
    expect(text(io.out)).toContain('run run-1 complete');
    expect(text(io.err)).toContain('HTTP 503; trying again');
    expect(text(io.err)).toContain('E_UNAVAILABLE: busy; still watching');
    expect(text(io.err)).toContain('the API answers again');
  });

  it('gives up with exit 5 once the outage outlasts its patience', async () => {
    const io = await served(await completeRun());
    const status = createStatusCommand({
      fetch: flaky(/\/runs\/run-1$/, 1000),
      transport: noWait,
      steady: { ...noWait, outageMs: 5000 },
    });

    expect(await status(['run-1', '--watch'], io)).toBe(5);
    expect(text(io.err)).toContain('E_UNAVAILABLE');
  });

  it('prints JSON lines with --json', async () => {
    const io = await served(await completeRun());

    expect(await main(['status', 'run-1', '--watch', '--json'], io)).toBe(0);

    const events = text(io.out)
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string });
    expect(events.map((e) => e.event)).toEqual(['run', 'step', 'end']);
    expect(events.at(-1)).toMatchObject({ event: 'end', status: 'complete', done: 1, total: 1 });
  });
});

describe('cairn events --follow', () => {
  it('rides out a busy API while it follows', async () => {
    const h = await completeRun();
    const io = await served(h);
    const events = createEventsCommand({ fetch: flaky(/\/events/, 5), transport: noWait, steady: noWait });

    const code = await events(['run-1', '--follow', '--interval', '1'], io);

    expect(code).toBe(0);
    expect(text(io.out)).toContain('RunFinished');
    expect(text(io.err)).toContain('still watching');
  });
});

describe('bin/cairn.js', () => {
  const run = (node: string) =>
    spawnSync(
      process.execPath,
      [
        '--import',
        `data:text/javascript,Object.defineProperty(process.versions,"node",{value:"${node}"})`,
        'bin/cairn.js',
        '--version',
      ],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      },
    );

  it('exits 2 with a clear message on a Node older than engines.node', () => {
    const old = run('18.19.0');
    expect(old.status).toBe(2);
    expect(old.stderr).toContain(`needs Node ${pkg.engines.node}, this is Node 18.19.0`);
  });

  it('runs on the Node engines.node asks for', () => {
    const [major, minor] = pkg.engines.node.replace('>=', '').split('.');
    const ok = run(`${major}.${minor ?? 0}.0`);
    expect([ok.status, ok.stdout]).toEqual([0, `${pkg.version}\n`]);
  });
});
