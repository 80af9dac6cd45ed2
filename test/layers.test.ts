// The layers of docs/architecture.md, enforced: every relative import in src/ (static, type-only,
// re-export or dynamic) must go down or sideways within its own part, never up or across.
//
//   base       imports nothing of src/ but base
//   log        base
//   core       log, base
//   codec      base and its own protocol's codec (src/protocols/<p>/codec)
//   transport  core, base (src/protocols/*.ts: the contract and the TCP listener)
//   protocol   core, base, transport, its own codec (src/protocols/<p>, never another protocol)
//   wire       base and itself: a protocol's client-side transport outside its codec, listed in
//              `clientTransports` (Felix's QUIC server and client, src/protocols/felix/quic.ts)
//   client     base, its own protocol's codec and wire, the SDKs' common code (src/clients/<p>: an
//              SDK never loads the broker, SQLite, the server or another protocol; packages/<p>
//              is built from these alone); src/clients/common imports base only
//   server     everything below it, never cli or clients
//   cli, src/index.ts   anything
//
// `knownExceptions` lists the imports that break a rule today, each with what removes it; an
// entry that no longer occurs fails the test too, so the list only shrinks.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const repo = normalize(fileURLToPath(new URL('..', import.meta.url)));
const srcRoot = join(repo, 'src');

type Part = 'base' | 'log' | 'core' | 'transport' | 'server' | 'cli' | 'root' | { codec: string } | { wire: string } | { protocol: string } | { client: string };

/** Files of a protocol an SDK may use beside its codec: they import only base and each other. */
const clientTransports: Record<string, readonly string[]> = {
  felix: ['src/protocols/felix/quic.ts', 'src/protocols/felix/self-signed.ts'],
};

/** The part a path under src/ belongs to ('src/...' form, '/' separators). */
export function partOf(path: string): Part {
  const p = path.split('/');
  assert.equal(p[0], 'src', path);
  if (p.length === 2) return 'root';
  switch (p[1]) {
    case 'base':
    case 'log':
    case 'core':
    case 'server':
    case 'cli':
      return p[1];
    case 'clients':
      return { client: p[2]! };
    case 'protocols':
      if (p.length === 3) return 'transport';
      if (clientTransports[p[2]!]?.includes(path) === true) return { wire: p[2]! };
      return p[3] === 'codec' ? { codec: p[2]! } : { protocol: p[2]! };
    default:
      throw new Error(`${path}: not in any layer; add its folder to test/layers.test.ts and docs/architecture.md`);
  }
}

function label(part: Part): string {
  if (typeof part === 'string') return part;
  if ('codec' in part) return `codec:${part.codec}`;
  if ('wire' in part) return `wire:${part.wire}`;
  if ('protocol' in part) return `protocol:${part.protocol}`;
  return `client:${part.client}`;
}

/** Null when `from` may import `to`, else the rule it breaks. */
export function brokenRule(from: Part, to: Part): string | null {
  const f = label(from);
  const t = label(to);
  if (f === t) return null;
  const allowed = (targets: string[]): string | null => (targets.includes(t) ? null : `${f} may import only ${targets.join(', ') || 'itself'}`);
  if (typeof from === 'string') {
    switch (from) {
      case 'base':
        return allowed([]);
      case 'log':
        return allowed(['base']);
      case 'core':
        return allowed(['log', 'base']);
      case 'transport':
        return allowed(['core', 'base']);
      case 'server':
        return t === 'cli' || t.startsWith('client:') ? 'server may not import the CLI or an SDK' : null;
      case 'cli':
      case 'root':
        return null;
    }
  }
  if ('codec' in from) return allowed(['base']);
  if ('wire' in from) return allowed(['base']);
  if ('protocol' in from) return allowed(['core', 'base', 'transport', `codec:${from.protocol}`, `wire:${from.protocol}`]);
  if (from.client === 'common') return allowed(['base']);
  return allowed(['base', `codec:${from.client}`, `wire:${from.client}`, 'client:common']);
}

interface Import {
  file: string;
  target: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((n) => {
      const p = join(dir, n);
      return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
    });
}

/** Every relative import of a source file: `from '…'`, `import '…'`, `import('…')`. */
export function relativeImports(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) out.push(m[1]!);
  return out;
}

function imports(): Import[] {
  const out: Import[] = [];
  for (const abs of sourceFiles(srcRoot)) {
    const file = relative(repo, abs).split('\\').join('/');
    for (const spec of relativeImports(readFileSync(abs, 'utf8'))) {
      const target = relative(repo, join(dirname(abs), spec)).split('\\').join('/').replace(/\.js$/, '.ts');
      out.push({ file, target });
    }
  }
  return out;
}

/** Imports that break a rule today: `file -> target`, with what removes them. */
const knownExceptions: Record<string, string> = {};

describe('layers', () => {
  it('every import in src/ keeps to the layers (docs/architecture.md)', () => {
    const broken: string[] = [];
    const seen = new Set<string>();
    for (const { file, target } of imports()) {
      if (!target.startsWith('src/')) {
        broken.push(`${file} -> ${target}: imports from outside src/`);
        continue;
      }
      const rule = brokenRule(partOf(file), partOf(target));
      if (rule === null) continue;
      const key = `${file} -> ${target}`;
      if (key in knownExceptions) seen.add(key);
      else broken.push(`${key}: ${rule}`);
    }
    assert.deepEqual(broken, [], `imports that break the layers:\n${broken.join('\n')}`);
    const stale = Object.keys(knownExceptions).filter((k) => !seen.has(k));
    assert.deepEqual(stale, [], 'known exceptions that no longer occur: remove them from test/layers.test.ts');
  });

  it('only the metadata store loads SQLite, so the log, the codecs and the SDKs never do', () => {
    const loaders = sourceFiles(srcRoot)
      .filter((abs) => /from\s*['"]better-sqlite3['"]|import\(\s*['"]better-sqlite3['"]/.test(readFileSync(abs, 'utf8')))
      .map((abs) => relative(repo, abs).split('\\').join('/'));
    assert.deepEqual(loaders, ['src/core/metadata-store.ts']);
  });

  it('the rules refuse what they must (the checker itself)', () => {
    assert.match(brokenRule('log', 'core') ?? '', /log may import only base/);
    assert.match(brokenRule({ codec: 'iggy' }, 'core') ?? '', /codec:iggy/);
    assert.match(brokenRule({ codec: 'iggy' }, { codec: 'kafka' }) ?? '', /codec:iggy/);
    assert.match(brokenRule({ protocol: 'iggy' }, { protocol: 'kafka' }) ?? '', /protocol:iggy/);
    assert.match(brokenRule({ protocol: 'kafka' }, 'server') ?? '', /protocol:kafka/);
    assert.match(brokenRule({ protocol: 'kafka' }, 'log') ?? '', /protocol:kafka/);
    assert.match(brokenRule({ client: 'iggy' }, 'server') ?? '', /client:iggy/);
    assert.match(brokenRule({ client: 'iggy' }, 'transport') ?? '', /client:iggy/);
    assert.match(brokenRule({ client: 'iggy' }, { codec: 'kafka' }) ?? '', /client:iggy may import only base, codec:iggy/);
    assert.match(brokenRule({ client: 'felix' }, { protocol: 'felix' }) ?? '', /client:felix/);
    assert.match(brokenRule({ client: 'common' }, { codec: 'felix' }) ?? '', /client:common/);
    assert.match(brokenRule({ wire: 'felix' }, 'core') ?? '', /wire:felix/);
    assert.equal(brokenRule({ client: 'felix' }, { wire: 'felix' }), null);
    assert.equal(brokenRule({ client: 'cursus' }, { client: 'common' }), null);
    assert.deepEqual(partOf('src/protocols/felix/quic.ts'), { wire: 'felix' });
    assert.match(brokenRule({ client: 'iggy' }, 'core') ?? '', /client:iggy/);
    assert.match(brokenRule({ client: 'iggy' }, 'log') ?? '', /client:iggy/);
    assert.match(brokenRule('base', 'log') ?? '', /base may import only itself/);
    assert.match(brokenRule('server', 'cli') ?? '', /server may not/);
    assert.equal(brokenRule({ protocol: 'kafka' }, { codec: 'kafka' }), null);
    assert.equal(brokenRule({ client: 'iggy' }, { codec: 'iggy' }), null);
    assert.equal(brokenRule('core', 'log'), null);
    assert.deepEqual(partOf('src/protocols/iggy/codec/commands/login.ts'), { codec: 'iggy' });
    assert.deepEqual(partOf('src/protocols/iggy/handlers/messages.ts'), { protocol: 'iggy' });
    assert.equal(partOf('src/protocols/transport.ts'), 'transport');
    assert.deepEqual(relativeImports(`import type { A } from '../log/types.js';\nexport { B } from "./b.js";\nconst c = await import('../server/x.js');\nimport './side.js';`), ['../log/types.js', './b.js', '../server/x.js', './side.js']);
  });
});
