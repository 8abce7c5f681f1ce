/** The API of a harness served on a free local port, and a CLI io pointed at it that keeps what is printed. */
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { serve } from '@hono/node-server';
import { afterEach } from 'vitest';
import { createApp } from '../../../shared/api/app.ts';
import type { CliIo } from '../../../shared/cli/io.ts';
import { type Harness, TOKEN } from '../api/harness.ts';

export interface Captured extends CliIo {
  readonly out: string[];
  readonly err: string[];
}

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

export async function served(h: Harness, env: Record<string, string> = {}): Promise<Captured> {
  const app = createApp(h.deps);
  const port = await new Promise<number>((resolve) => {
    servers.push(
      serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(info.port)),
    );
  });
  return capturing({ CAIRN_API_URL: `http://127.0.0.1:${port}`, CAIRN_API_TOKEN: TOKEN, ...env });
}

/** A CLI io that keeps what is printed, with this environment. */
export function capturing(env: Record<string, string>): Captured {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => out.push(t), stderr: (t) => err.push(t), env, cwd: tmpdir() };
}
