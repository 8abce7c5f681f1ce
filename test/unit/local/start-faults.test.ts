import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../infra/local/main.ts';

/** What `npm start` wrote to stderr and stdout, and its exit code (only for arguments refused before the boot). */
async function start(args: string[]): Promise<{ code: number; err: string; out: string }> {
  const err: string[] = [];
  const out: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => err.push(String(chunk)) > 0);
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => out.push(String(chunk)) > 0);
  const code = await main(args);
  return { code, err: err.join(''), out: out.join('') };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('npm start --faults', () => {
  it('refuses a bad spec with its code, naming the bad part, before it boots anything', async () => {
    const { code, err, out } = await start(['--faults', 'store.write:throttle@0.1,bus.deliver:explode@1']);
    expect(code).toBe(2);
    expect(err).toContain('E_BAD_FAULTS');
    expect(err).toContain('bus.deliver:explode@1');
    expect(out).not.toContain('starting');
  });

  it('refuses a bad seed naming the flag', async () => {
    const { code, err } = await start(['--faults', 'store.write:throttle@0.1', '--faults-seed', 'soon']);
    expect(code).toBe(2);
    expect(err).toMatch(/E_BAD_FAULTS.*--faults-seed/);
  });

  it('documents the flags in --help', async () => {
    const { code, out } = await start(['--help']);
    expect(code).toBe(0);
    expect(out).toContain('--faults SPEC');
    expect(out).toContain('--faults-seed N');
  });
});
