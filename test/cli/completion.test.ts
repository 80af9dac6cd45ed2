// `quartet completion bash|zsh` loaded into the real shells. zsh: an interactive zsh under zsh's own
// pseudo-terminal module (zpty) runs compinit, sources the script and is sent `quartet to<TAB>`;
// a compadd wrapper writes down what the completion offered. bash: the function is called as
// bash's programmable completion calls it. No zsh: skipped with the install hint (a failure under
// QUARTET_REQUIRE_CLIENTS=1, test/missing-client.ts).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CliIo } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { missingClient } from '../missing-client.js';

/** What `quartet completion <shell>` prints. */
async function completionScript(shell: string): Promise<string> {
  let out = '';
  let err = '';
  const io: CliIo = { stdout: (t) => void (out += t), stderr: (t) => void (err += t), readStdin: async () => '', env: {}, cwd: process.cwd() };
  assert.equal(await main(['completion', shell], io), 0, err);
  return out;
}

function zshSkip(): string | false {
  if (spawnSync('zsh', ['--version'], { stdio: 'ignore', timeout: 20_000 }).status === 0) return false;
  return missingClient('zsh is not installed (apt-get install zsh)');
}

/** Seconds each step of the zsh session may take (compinit is slow on a loaded machine). */
const zshStepSecondsMax = 60;

// Run as `zsh -f -c DRIVER driver MODE SCRIPT DIR LINE...`. One interactive zsh in a zpty loads the
// completion (MODE source: `source SCRIPT` after compinit; fpath: SCRIPT is a file named _quartet
// in a directory put first in $fpath before compinit, which then autoloads it); for the k-th LINE, the line and a TAB are typed, the wrapper writes the offered
// matches to DIR/matches-k, and ^U clears the line. Each wait polls until a deadline.
const zshDriver = `
zmodload zsh/zpty || exit 3
zmodload zsh/zselect || exit 3
typeset -F SECONDS
mode=$1 script=$2 dir=$3; shift 3
await() { # until the file named $1 exists, or the output matches $2
  local chunk deadline=$(( SECONDS + ${zshStepSecondsMax} ))
  while (( SECONDS < deadline )); do
    [[ -n $1 && -e $1 ]] && return 0
    if zpty -r -t z chunk; then buf+=$chunk; [[ -n $2 && $buf == *$2* ]] && return 0; else zselect -t 5; fi
  done
  print -u2 -r -- "zsh: timed out waiting for \${1:-$2}; the terminal showed: $buf"
  exit 4
}
zpty z zsh -f -i
buf=''
if [[ $mode == fpath ]]; then load="fpath=(\${(q)script:h} \\$fpath); autoload -Uz compinit; compinit -u -D"
else load="autoload -Uz compinit; compinit -u -D; source \${(q)script}"; fi
zpty -w z "PS1=''; $load; print -r -- loaded:\\$_comps[quartet]:\\$(( 6 * 7 ))"
await '' ':42'
[[ $buf == *loaded:_quartet:42* ]] || { print -u2 -r -- "no completion for quartet ($mode): $buf"; exit 5 }
zpty -w z "integer __n=0; compadd() { builtin compadd -O __m \\"\\$@\\"; print -rl -- \\$__m > \${(q)dir}/part; mv \${(q)dir}/part \${(q)dir}/matches-\\$(( ++__n )); builtin compadd \\"\\$@\\" }"
integer k=0
for line in "$@"; do
  zpty -w -n z "$line"$'\\t'
  await $dir/matches-$(( ++k )) ''
  zpty -w -n z $'\\x15' # ^U
done
zpty -d z
`;

/** Loads the zsh script as `mode` says, completes each line, and returns what each completion offered. */
async function zshComplete(mode: 'source' | 'fpath', lines: string[]): Promise<string[][]> {
  const dir = mkdtempSync(join(tmpdir(), 'quartet-zsh-'));
  try {
    const script = join(dir, 'functions', '_quartet');
    mkdirSync(join(dir, 'functions'));
    writeFileSync(script, await completionScript('zsh'));
    const r = spawnSync('zsh', ['-f', '-c', zshDriver, 'driver', mode, script, dir, ...lines], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, TERM: 'dumb' },
      timeout: (lines.length + 2) * zshStepSecondsMax * 1000,
    });
    assert.equal(r.status, 0, `zsh exited ${r.status ?? r.signal}: ${r.stderr}`);
    return lines.map((_, i) => readFileSync(join(dir, `matches-${i + 1}`), 'utf8').split('\n').filter((w) => w !== ''));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('zsh: the script sourced after compinit completes commands, subcommands and flags', { skip: zshSkip(), timeout: 300_000 }, async () => {
  const cases: Array<[string, string[]]> = [
    ['quartet to', ['topic', 'token']],
    ['quartet topic alt', ['alter-config']],
    ['quartet group reset-offsets g --to-e', ['--to-earliest']],
    ['quartet help gro', ['group']],
    ['quartet user list --off', ['--offline']],
    ['quartet iggy poll --con', ['--consumer-group']],
  ];
  assert.deepEqual(await zshComplete('source', cases.map(([line]) => line)), cases.map(([, matches]) => matches));
});

test('zsh: the script as _quartet in $fpath is autoloaded by compinit and completes from the first TAB', { skip: zshSkip(), timeout: 300_000 }, async () => {
  assert.deepEqual(await zshComplete('fpath', ['quartet to', 'quartet topic alt']), [['topic', 'token'], ['alter-config']]);
});

test('bash: the script registers _quartet for quartet and completes commands, subcommands and flags', async () => {
  const script = await completionScript('bash');
  const complete = (words: string[]): string[] => {
    const r = spawnSync('bash', ['--norc', '-c', `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _quartet; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.split('\n').filter((w) => w !== '');
  };
  const registered = spawnSync('bash', ['--norc', '-c', `${script}\ncomplete -p quartet`], { encoding: 'utf8' });
  assert.equal(registered.stdout.trim(), 'complete -o default -F _quartet quartet', registered.stderr);
  assert.deepEqual(complete(['quartet', 'to']), ['topic', 'token']);
  assert.deepEqual(complete(['quartet', 'gr']), ['group']);
  assert.deepEqual(complete(['quartet', 'topic', 'alt']), ['alter-config']);
  assert.deepEqual(complete(['quartet', 'group', 'reset-offsets', '--to-e']), ['--to-earliest']);
  assert.deepEqual(complete(['quartet', 'help', 'gro']), ['group']);
  assert.deepEqual(complete(['quartet', 'user', 'list', '--off']), ['--offline']);
});
