/**
 * `cairn completion bash|zsh|fish`: a completion script for the shell, printed to standard output (bash:
 * `source <(cairn completion bash)`; zsh: `source <(cairn completion zsh)`; fish: `cairn completion fish | source`).
 * It completes command names and each command's flags. The flags are read from each command's own `--help`, the
 * text that documents them, so a new flag is completed as soon as it is documented.
 */
import { type CliIo, type CommandEntry, type CommandRun, EXIT_OK, EXIT_USAGE } from '../io.ts';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

const USAGE = `usage: cairn completion bash|zsh|fish

  bash:  source <(cairn completion bash)       (or save it in your bash-completion directory)
  zsh:   source <(cairn completion zsh)        (after compinit)
  fish:  cairn completion fish | source        (or save it as ~/.config/fish/completions/cairn.fish)
`;

export interface CommandFlags {
  readonly name: string;
  readonly summary: string;
  readonly flags: readonly string[];
}

/** The `--flags` a command's usage documents (its usage lines and option lines), in order, once each. */
export async function flagsOf(entry: CommandEntry): Promise<string[]> {
  const out: string[] = [];
  const io: CliIo = { stdout: (t) => out.push(t), stderr: () => {}, env: {}, cwd: '.' };
  await (await entry.load()).run(['--help'], io);
  const documented = out
    .join('')
    .split('\n')
    .flatMap((line) => {
      // A usage line (`usage: cairn x --mcp <c>`) shows its flags anywhere; an option line begins with its flag.
      if (/^\s*(?:usage:\s*)?cairn\s/.test(line)) return line.match(/--[a-z][a-z-]*/g) ?? [];
      return /^ {2,}(--[a-z][a-z-]*)/.exec(line)?.slice(1) ?? [];
    });
  return [...new Set(documented)];
}

const quoted = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

function bash(commands: readonly CommandFlags[]): string {
  const cases = commands.map((c) => `    ${c.name}) opts=${quoted(c.flags.join(' '))} ;;`).join('\n');
  return `# cairn completion for bash: source <(cairn completion bash)
_cairn() {
  local cur opts
  cur="\${COMP_WORDS[COMP_CWORD]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W ${quoted(`${commands.map((c) => c.name).join(' ')} --help --version`)} -- "$cur") )
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
    *) opts='' ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  else
    COMPREPLY=( $(compgen -f -- "$cur") )
  fi
}
complete -o filenames -F _cairn cairn
`;
}

function zsh(commands: readonly CommandFlags[]): string {
  const described = commands.map((c) => `    ${quoted(`${c.name}:${c.summary.replaceAll(':', '\\:')}`)}`).join('\n');
  const cases = commands.map((c) => `    ${c.name}) flags=(${c.flags.join(' ')}) ;;`).join('\n');
  return `#compdef cairn
# cairn completion for zsh: source <(cairn completion zsh)
_cairn() {
  local -a commands flags
  commands=(
${described}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  case \${words[2]} in
${cases}
  esac
  if [[ \${words[CURRENT]} == -* ]]; then
    compadd -- \${flags[@]}
  else
    _files
  fi
}
compdef _cairn cairn
`;
}

function fish(commands: readonly CommandFlags[]): string {
  const lines = ['# cairn completion for fish: cairn completion fish | source', 'complete -c cairn -f'];
  for (const c of commands) {
    lines.push(`complete -c cairn -n __fish_use_subcommand -a ${c.name} -d ${quoted(c.summary)}`);
    for (const flag of c.flags)
      lines.push(`complete -c cairn -n ${quoted(`__fish_seen_subcommand_from ${c.name}`)} -l ${flag.slice(2)}`);
  }
  lines.push("complete -c cairn -n __fish_use_subcommand -l version -d 'print the version'");
  return `${lines.join('\n')}\n`;
}

const SCRIPTS: Readonly<Record<Shell, (commands: readonly CommandFlags[]) => string>> = { bash, zsh, fish };

export const completionCommand =
  (table: Readonly<Record<string, CommandEntry>>): CommandRun =>
  async (argv, io) => {
    const [shell, ...rest] = argv;
    if (shell === '--help' || shell === '-h') {
      io.stdout(USAGE);
      return EXIT_OK;
    }
    if (shell === undefined || rest.length > 0 || !(SHELLS as readonly string[]).includes(shell)) {
      io.stderr(`cairn completion: name one shell: ${SHELLS.join(', ')}\n\n${USAGE}`);
      return EXIT_USAGE;
    }
    const commands = await Promise.all(
      Object.entries(table)
        .filter(([name]) => name !== 'completion')
        .map(async ([name, entry]) => ({ name, summary: entry.summary, flags: await flagsOf(entry) })),
    );
    commands.push({ name: 'completion', summary: table.completion?.summary ?? '', flags: ['--help'] });
    io.stdout(SCRIPTS[shell as Shell](commands));
    return EXIT_OK;
  };
