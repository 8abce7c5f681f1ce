import pkg from '../../package.json' with { type: 'json' };
import { COMMANDS } from './commands/index.ts';
import { type CliIo, EXIT_CODES_HELP, EXIT_USAGE, processIo } from './io.ts';
import { didYouMean } from './suggest.ts';

export const VERSION: string = pkg.version;

const usage = (): string =>
  [
    'usage: cairn <command> [options]',
    '',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`),
    '',
    '  --version  print the version',
    '  --help     print this help',
    '',
    'Run `cairn <command> --help` for the options of one command.',
    'Commands that call the API take --api <url> (CAIRN_API_URL) and --token <token> (CAIRN_API_TOKEN), and --json.',
    '',
    EXIT_CODES_HELP,
  ].join('\n');

export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(usage());
    return name === undefined ? EXIT_USAGE : 0;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    io.stdout(`${VERSION}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    const known = [...Object.keys(COMMANDS), ...(name.startsWith('-') ? ['--version', '--help'] : [])];
    const what = name.startsWith('-') ? 'option' : 'command';
    io.stderr(`cairn: unknown ${what} "${name}"${didYouMean(name, known)}\n\n${usage()}`);
    return EXIT_USAGE;
  }
  const { run } = await command.load();
  return run(rest, io);
}
