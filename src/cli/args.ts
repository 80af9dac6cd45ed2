// A small command-line parser: `--name value`, `--name=value`, boolean `--name`, `--no-name` and
// `--name=false`, `--` to end flags; a `multiple` flag may be given several times. Every flag must
// be declared; anything else is a usage error, with the closest declared flag as a hint.

import { didYouMean } from './suggest.js';

export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose usage to point at ("log dump"), or null for the top level. */
    readonly command: string | null = null,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface FlagSpec {
  /** Takes no value. */
  boolean?: boolean;
  /** Short alias without the dash: h for --help. */
  short?: string;
  /** May be given several times; the values are collected in order (listFlag). */
  multiple?: boolean;
}

export interface ParsedArgs {
  flags: Record<string, string | boolean | string[]>;
  positionals: string[];
}

/** Parses `argv` against `spec`; throws UsageError on an unknown flag or a missing value. */
export function parseArgs(argv: readonly string[], spec: Readonly<Record<string, FlagSpec>>, command: string | null = null): ParsedArgs {
  const flags: Record<string, string | boolean | string[]> = {};
  const positionals: string[] = [];
  const shorts = new Map(Object.entries(spec).flatMap(([name, s]) => (s.short ? [[s.short, name] as const] : [])));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (/^-[a-zA-Z]$/.test(arg)) {
      const name = shorts.get(arg.slice(1));
      if (!name) throw new UsageError(`unknown option ${arg}`, command);
      i = take(name, undefined, argv, i, spec, flags, command);
      continue;
    }
    if (!arg.startsWith('--') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const rawName = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    if (rawName.startsWith('no-') && spec[rawName.slice(3)]?.boolean && inline === undefined) {
      flags[rawName.slice(3)] = false;
      continue;
    }
    if (!Object.hasOwn(spec, rawName)) throw new UsageError(`unknown option --${rawName}${didYouMean(rawName, Object.keys(spec), (f) => `--${f}`)}`, command);
    i = take(rawName, inline, argv, i, spec, flags, command);
  }
  return { flags, positionals };
}

function take(
  name: string,
  inline: string | undefined,
  argv: readonly string[],
  i: number,
  spec: Readonly<Record<string, FlagSpec>>,
  flags: Record<string, string | boolean | string[]>,
  command: string | null,
): number {
  const store = (value: string): void => {
    const previous = flags[name];
    flags[name] = spec[name]!.multiple ? [...(Array.isArray(previous) ? previous : []), value] : value;
  };
  if (spec[name]!.boolean) {
    if (inline === undefined) flags[name] = true;
    else if (inline === 'true' || inline === 'false') flags[name] = inline === 'true';
    else throw new UsageError(`--${name} takes true or false, not "${inline}"`, command);
    return i;
  }
  if (inline !== undefined) {
    store(inline);
    return i;
  }
  const next = argv[i + 1];
  if (next === undefined || (next.startsWith('--') && next.length > 2)) throw new UsageError(`--${name} needs a value`, command);
  store(next);
  return i + 1;
}

/** A flag's string value, or undefined; a boolean where a string was expected cannot happen. */
export function stringFlag(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags[name];
  return typeof v === 'string' ? v : undefined;
}

/** Every value of a `multiple` flag, in order ([] when absent). */
export function listFlag(args: ParsedArgs, name: string): string[] {
  const v = args.flags[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}

/** A non-negative integer flag, with its name in the error. */
export function integerFlag(args: ParsedArgs, name: string, command: string): number | undefined {
  const v = stringFlag(args, name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw new UsageError(`--${name} takes a non-negative integer, not "${v}"`, command);
  return Number(v);
}
