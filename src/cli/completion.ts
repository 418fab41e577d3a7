// `murmur-gc completion bash|zsh|fish`: shell completion scripts rendered from the same commander
// definitions that print --help, so a new command or option is completed without editing them.
// Guarantees: pure (no fs); every visible command, subcommand, option and argument choice is
// offered where --help lists it; with no command, the default command's options are offered too
// (`murmur-gc --dry-run` runs a sweep); the word after an option that takes a value is never read
// as a command; `<file>` values complete file names, `<dir>` values directories, other values
// nothing.
import { Argument, type Command, type Help } from 'commander';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

interface OptionSpec {
  long: string | undefined;
  short: string | undefined;
  value: 'none' | 'file' | 'dir' | 'other';
  description: string;
}

interface Node {
  /** `''` for the program, `/conversation/ls` for a nested command. */
  path: string;
  commands: { name: string; description: string }[];
  options: OptionSpec[];
  /** Choices of the command's arguments (`completion <shell>`). */
  choices: string[];
}

function optionSpec(o: Command['options'][number]): OptionSpec {
  const placeholder = /<([^>]+)>|\[([^\]]+)\]/.exec(o.flags);
  const name = placeholder ? (placeholder[1] ?? placeholder[2] ?? '') : '';
  const value = !placeholder ? 'none' : name === 'file' ? 'file' : name === 'dir' ? 'dir' : 'other';
  return { long: o.long, short: o.short, value, description: o.description ?? '' };
}

function collect(cmd: Command, help: Help, path: string, out: Node[], defaultOptions: OptionSpec[]): void {
  const subs = help.visibleCommands(cmd).filter((c) => c.name() !== 'help');
  const options = help.visibleOptions(cmd).map((o) => optionSpec(o));
  const seen = new Set(options.map((o) => o.long));
  for (const o of defaultOptions) if (!seen.has(o.long)) options.push(o);
  const choices = help.visibleArguments(cmd).flatMap((a) => a.argChoices ?? []);
  out.push({ path, commands: subs.map((s) => ({ name: s.name(), description: s.description() })), options, choices });
  for (const s of subs) collect(s, help, `${path}/${s.name()}`, out, []);
}

/** The command tree as completion sees it. */
export function completionTree(program: Command): Node[] {
  const help = program.createHelp();
  const dflt = (program as unknown as { _defaultCommandName?: string | null })._defaultCommandName;
  const dfltCmd = program.commands.find((c) => c.name() === dflt);
  const defaultOptions = dfltCmd ? help.visibleOptions(dfltCmd).map((o) => optionSpec(o)) : [];
  const out: Node[] = [];
  collect(program, help, '', out, defaultOptions);
  return out;
}

function flagsOf(o: OptionSpec): string[] {
  return [o.short, o.long].filter((f): f is string => f !== undefined);
}

function valueOptions(nodes: Node[], kind?: OptionSpec['value']): string[] {
  const set = new Set<string>();
  for (const n of nodes)
    for (const o of n.options)
      if (o.value !== 'none' && (kind === undefined || o.value === kind)) for (const f of flagsOf(o)) set.add(f);
  return [...set].sort();
}

function words(n: Node): string[] {
  return [...n.commands.map((c) => c.name), ...n.choices, ...n.options.flatMap(flagsOf)];
}

/** Single-quoted for sh, bash and zsh. */
function sq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Single-quoted for fish (backslash and quote are escaped inside). */
function fq(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function pathCase(nodes: Node[], indent: string, sep: string, end: string): string {
  const paths = nodes.filter((n) => n.path !== '').map((n) => `"${n.path}"`);
  return `${indent}case "$cpath/$w" in\n${indent}  ${paths.join('|')}) cpath="$cpath/$w" ${end}\n${indent}esac${sep}`;
}

function bash(nodes: Node[], name: string, fn: string): string {
  const values = valueOptions(nodes);
  const lines = [
    `# bash completion for ${name} (printed by \`${name} completion bash\`; generated from its --help definitions)`,
    `# Use: source <(${name} completion bash), or save it as ~/.local/share/bash-completion/completions/${name}`,
    `${fn}() {`,
    '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="" cpath="" w i skip=0',
    '  (( COMP_CWORD > 0 )) && prev="${COMP_WORDS[COMP_CWORD-1]}"',
    '  for (( i = 1; i < COMP_CWORD; i++ )); do',
    '    w="${COMP_WORDS[i]}"',
    '    if (( skip )); then skip=0; continue; fi',
    '    case "$w" in',
    ...(values.length > 0 ? [`      ${values.join('|')}) skip=1; continue ;;`] : []),
    '      -*) continue ;;',
    '    esac',
    pathCase(nodes, '    ', '', ';;'),
    '  done',
    '  case "$prev" in',
    ...(valueOptions(nodes, 'file').length > 0
      ? [
          `    ${valueOptions(nodes, 'file').join('|')}) compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ); return ;;`,
        ]
      : []),
    ...(valueOptions(nodes, 'dir').length > 0
      ? [
          `    ${valueOptions(nodes, 'dir').join('|')}) compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -d -- "$cur") ); return ;;`,
        ]
      : []),
    ...(valueOptions(nodes, 'other').length > 0
      ? [`    ${valueOptions(nodes, 'other').join('|')}) COMPREPLY=(); return ;;`]
      : []),
    '  esac',
    '  local words=""',
    '  case "$cpath" in',
    ...nodes.map((n) => `    "${n.path}") words=${sq(words(n).join(' '))} ;;`),
    '  esac',
    '  COMPREPLY=( $(compgen -W "$words" -- "$cur") )',
    '}',
    `complete -F ${fn} ${name}`,
  ];
  return lines.join('\n') + '\n';
}

function zsh(nodes: Node[], name: string, fn: string): string {
  const values = valueOptions(nodes);
  const entry = (word: string, description: string): string => sq(`${word.replace(/:/g, '\\:')}:${description}`);
  const lines = [
    `#compdef ${name}`,
    `# zsh completion for ${name} (printed by \`${name} completion zsh\`; generated from its --help definitions)`,
    `# Use: source <(${name} completion zsh) after compinit, or save it as _${name} in a directory of $fpath`,
    `${fn}() {`,
    '  local cur="${words[CURRENT]}" prev="${words[CURRENT-1]}" cpath="" w i skip=0',
    '  for (( i = 2; i < CURRENT; i++ )); do',
    '    w="${words[i]}"',
    '    if (( skip )); then skip=0; continue; fi',
    '    case "$w" in',
    ...(values.length > 0 ? [`      ${values.join('|')}) skip=1; continue ;;`] : []),
    '      -*) continue ;;',
    '    esac',
    pathCase(nodes, '    ', '', ';;'),
    '  done',
    '  case "$prev" in',
    ...(valueOptions(nodes, 'file').length > 0
      ? [`    ${valueOptions(nodes, 'file').join('|')}) _files; return ;;`]
      : []),
    ...(valueOptions(nodes, 'dir').length > 0
      ? [`    ${valueOptions(nodes, 'dir').join('|')}) _files -/; return ;;`]
      : []),
    ...(valueOptions(nodes, 'other').length > 0 ? [`    ${valueOptions(nodes, 'other').join('|')}) return 1 ;;`] : []),
    '  esac',
    '  local -a candidates',
    '  case "$cpath" in',
    ...nodes.map((n) => {
      const items = [
        ...n.commands.map((c) => entry(c.name, c.description)),
        ...n.choices.map((c) => entry(c, c)),
        ...n.options.flatMap((o) => flagsOf(o).map((f) => entry(f, o.description))),
      ];
      return `    "${n.path}") candidates=(${items.join(' ')}) ;;`;
    }),
    '  esac',
    `  _describe -t commands ${sq(name)} candidates`,
    '}',
    `if [[ "\${zsh_eval_context[-1]}" == loadautofunc ]]; then`,
    `  ${fn} "$@"`,
    'else',
    `  compdef ${fn} ${name}`,
    'fi',
  ];
  return lines.join('\n') + '\n';
}

function fish(nodes: Node[], name: string, fn: string): string {
  const values = valueOptions(nodes);
  const paths = nodes.filter((n) => n.path !== '').map((n) => n.path);
  const lines = [
    `# fish completion for ${name} (printed by \`${name} completion fish\`; generated from its --help definitions)`,
    `# Use: ${name} completion fish > ~/.config/fish/completions/${name}.fish`,
    `# ${fn}_at PATH: the words before the cursor name the command PATH ('' for none, /conversation/ls)`,
    `function ${fn}_at`,
    '    set -l cpath ""',
    '    set -l skip 0',
    '    for w in (commandline -opc)[2..-1]',
    '        if test $skip = 1',
    '            set skip 0',
    '            continue',
    '        end',
    '        switch $w',
    ...(values.length > 0
      ? [`            case ${values.join(' ')}`, '                set skip 1', '                continue']
      : []),
    "            case '-*'",
    '                continue',
    '        end',
    '        switch "$cpath/$w"',
    `            case ${paths.join(' ')}`,
    '                set cpath "$cpath/$w"',
    '        end',
    '    end',
    '    test "$cpath" = "$argv[1]"',
    'end',
    `complete -c ${name} -f`,
  ];
  for (const n of nodes) {
    const cond = `-n ${fq(`${fn}_at '${n.path}'`)}`;
    for (const c of n.commands) lines.push(`complete -c ${name} ${cond} -a ${fq(c.name)} -d ${fq(c.description)}`);
    if (n.choices.length > 0) lines.push(`complete -c ${name} ${cond} -a ${fq(n.choices.join(' '))}`);
    for (const o of n.options) {
      const flags = [o.short ? `-s ${o.short.slice(1)}` : '', o.long ? `-l ${o.long.slice(2)}` : '']
        .filter((f) => f !== '')
        .join(' ');
      const value =
        o.value === 'file'
          ? ' -r -F'
          : o.value === 'dir'
            ? " -x -a '(__fish_complete_directories)'"
            : o.value === 'other'
              ? ' -x'
              : '';
      lines.push(`complete -c ${name} ${cond} ${flags}${value} -d ${fq(o.description)}`);
    }
  }
  return lines.join('\n') + '\n';
}

export function renderCompletion(shell: Shell, program: Command): string {
  const nodes = completionTree(program);
  const name = program.name();
  const fn = `_${name.replace(/[^A-Za-z0-9]/g, '_')}`;
  if (shell === 'bash') return bash(nodes, name, fn);
  if (shell === 'zsh') return zsh(nodes, name, fn);
  return fish(nodes, name, fn);
}

export function registerCompletionCommand(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script for bash, zsh or fish on stdout')
    .addArgument(new Argument('<shell>', 'the shell to complete for').choices(SHELLS))
    .action((shell: Shell) => {
      process.stdout.write(renderCompletion(shell, program));
    });
}
