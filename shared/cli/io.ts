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

/** A command of the table (commands/index.ts): its summary, and its module, loaded only when it runs. */
export interface CommandEntry {
  readonly summary: string;
  readonly load: () => Promise<{ run: CommandRun }>;
}

/**
 * Exit codes shared by every command, so a script can tell the cases apart: 0 ok; 1 the answer is "no" (an invalid
 * plan, a failed or cancelled run, a refusal by the API); 2 bad usage; 3 the run is paused, waiting for a person;
 * 4 the API refused the caller (unauthorized or forbidden); 5 the API could not be reached (or stayed unavailable).
 */
export const EXIT_OK = 0;
export const EXIT_NO = 1;
export const EXIT_USAGE = 2;
export const EXIT_PAUSED = 3;
export const EXIT_UNAUTHORIZED = 4;
export const EXIT_UNREACHABLE = 5;

export const EXIT_CODES_HELP = `exit codes:
  0  ok
  1  the run failed or was cancelled; the plan is invalid; the API refused the request
  2  bad usage
  3  the run is paused, waiting for a person (cairn approvals)
  4  unauthorized or forbidden (check --token / CAIRN_API_TOKEN)
  5  the API could not be reached, or stayed unavailable (check --api / CAIRN_API_URL)
`;

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
