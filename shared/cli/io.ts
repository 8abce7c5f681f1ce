import { createInterface } from 'node:readline/promises';

/** What a CLI command may touch: its streams and the environment. Tests pass their own. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** All of standard input, as bytes (commands that read a body from a pipe); tests pass their own. */
  readonly readStdin?: () => Promise<Uint8Array>;
  /** Asks a person a question and returns the answer; present only on an interactive terminal. */
  readonly ask?: (question: string) => Promise<string>;
}

export type CommandRun = (argv: readonly string[], io: CliIo) => Promise<number>;

/** Exit codes shared by every command: 0 ok, 1 the answer is "no" (invalid plan, failed run), 2 bad usage. */
export const EXIT_OK = 0;
export const EXIT_NO = 1;
export const EXIT_USAGE = 2;

export const processIo = (): CliIo => ({
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    return Buffer.concat(chunks);
  },
  // The question goes to stderr: stdout may be carrying the command's JSON.
  ...(process.stdin.isTTY && process.stderr.isTTY
    ? {
        ask: async (question: string) => {
          const rl = createInterface({ input: process.stdin, output: process.stderr });
          try {
            return await rl.question(question);
          } finally {
            rl.close();
          }
        },
      }
    : {}),
});

/** A usage error: the command prints it with its usage line and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
