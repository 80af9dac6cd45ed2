// quartet completion bash|zsh: shell completion scripts, generated from the commands' own flag
// tables so that they cannot drift from what the parser accepts. They complete commands,
// subcommands and --flags; values (topic names, files) are left to the shell's defaults.

import { aclSubcommands, tokenSubcommands, userSubcommands } from './account-commands.js';
import { UsageError, type FlagSpec } from './args.js';
import { groupSubcommands } from './group-commands.js';
import type { CliIo } from './io.js';
import { didYouMean } from './suggest.js';
import { topicSubcommands } from './topic-commands.js';

type Tree = Record<string, Record<string, readonly string[]>>;

function flagsOf(spec: Record<string, FlagSpec>): string[] {
  return Object.keys(spec).map((f) => `--${f}`);
}

function subtree(table: Record<string, Record<string, FlagSpec>>, extra: readonly string[] = []): Record<string, readonly string[]> {
  return Object.fromEntries(Object.entries(table).map(([sub, spec]) => [sub, [...flagsOf(spec), ...extra]]));
}

/** command → subcommand → flags ('' is the command's own flags, for commands without subcommands). */
export function commandTree(): Tree {
  const iggyConnection = ['--addr', '--username', '--password', '--token', '--tls', '--tls-ca', '--json'];
  const tree: Tree = {
    topic: subtree(topicSubcommands),
    group: subtree(groupSubcommands),
    user: subtree(userSubcommands, ['--offline', '--data-dir', '--config']),
    token: subtree(tokenSubcommands),
    acl: subtree(aclSubcommands),
    iggy: {
      ping: iggyConnection,
      stream: ['create', 'list', 'delete', ...iggyConnection],
      topic: ['create', 'list', 'delete', '--partitions', '--message-expiry', ...iggyConnection],
      send: ['--partition', '--key', '--headers', '--no-progress', ...iggyConnection],
      poll: ['--partition', '--from', '--count', '--follow', '--consumer-group', ...iggyConnection],
    },
    log: { dump: ['--from', '--limit', '--json'], verify: [] },
    serve: { '': ['--config', '--data-dir', '--log-level', '--kafka-addr', '--iggy-addr', '--cursus-addr', '--http-addr'] },
    completion: { bash: [], zsh: [] },
    version: { '': ['--json'] },
    help: {},
  };
  // `quartet help COMMAND`: every command name.
  tree.help = Object.fromEntries(Object.keys(tree).map((c) => [c, []]));
  return tree;
}

function shellWords(words: Iterable<string>): string {
  return [...words].join(' ');
}

export function bashScript(tree: Tree = commandTree()): string {
  const cases = Object.entries(tree)
    .map(([command, subs]) => {
      const names = Object.keys(subs).filter((s) => s !== '');
      const subCases = Object.entries(subs)
        .filter(([sub]) => sub !== '')
        .map(([sub, flags]) => `        ${sub}) words="${shellWords(flags)}" ;;`)
        .join('\n');
      const own = subs[''] ?? [];
      return `    ${command})
      if [ "$COMP_CWORD" -eq 2 ]; then words="${shellWords([...names, ...own])}"; else
      case "\${COMP_WORDS[2]}" in
${subCases}
        *) words="${shellWords(own)}" ;;
      esac
      fi ;;`;
    })
    .join('\n');
  return `# bash completion for quartet (quartet completion bash)
_quartet() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" words=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    words="${shellWords(Object.keys(tree))}"
  else
    case "\${COMP_WORDS[1]}" in
${cases}
    esac
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _quartet quartet
`;
}

export function zshScript(tree: Tree = commandTree()): string {
  const cases = Object.entries(tree)
    .map(([command, subs]) => {
      const names = Object.keys(subs).filter((s) => s !== '');
      const subCases = Object.entries(subs)
        .filter(([sub]) => sub !== '')
        .map(([sub, flags]) => `          ${sub}) candidates=(${shellWords(flags)}) ;;`)
        .join('\n');
      const own = subs[''] ?? [];
      return `      ${command})
        if (( CURRENT == 3 )); then candidates=(${shellWords([...names, ...own])}); else
        case $words[3] in
${subCases}
          *) candidates=(${shellWords(own)}) ;;
        esac
        fi ;;`;
    })
    .join('\n');
  return `#compdef quartet
# zsh completion for quartet (quartet completion zsh)
# $words and $CURRENT are zsh's: the command line and the index of the word being completed.
_quartet() {
  local -a candidates
  if (( CURRENT == 2 )); then
    candidates=(${shellWords(Object.keys(tree))})
  else
    case $words[2] in
${cases}
    esac
  fi
  compadd -a candidates
}
# Autoloaded from a file named _quartet in $fpath, this runs on the first completion: complete it.
# Sourced after compinit: register the function.
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _quartet "$@"
elif (( $+functions[compdef] )); then compdef _quartet quartet; fi
`;
}

export async function completionCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const [shell, ...rest] = argv;
  if (rest.length > 0) throw new UsageError(`completion takes one shell, got "${argv.join(' ')}"`, 'completion');
  if (shell === 'bash') io.stdout(bashScript());
  else if (shell === 'zsh') io.stdout(zshScript());
  else throw new UsageError(shell === undefined ? 'completion needs a shell: bash or zsh' : `unknown shell "${shell}"${didYouMean(shell, ['bash', 'zsh'])}`, 'completion');
  return 0;
}
