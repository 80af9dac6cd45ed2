// What a Cursus consumer group subscribes to (spec, "REGISTER_GROUP": exactly one of `topic`,
// `topics` or `pattern`) and its concrete expansion: every topic-partition the selector names
// now, as one flat list whose positions are the partition numbers the core group engine assigns
// (src/core/groups/server-side.ts). The list is ordered by topic name, then partition; when topics
// or partitions come or go, a new expansion is made and the engine renumbers by `keyOf`.
//
// Cursus topics are the catalog's topics of the `default` namespace, by name (docs/mapping.md).
// A pattern is a glob as in Cursus v1: `*` any run of characters, `?` exactly one.

import { defaultNamespaceName, type Topic } from '../../core/catalog.js';

// Named limits.
/** Topics a `topics=` selector may name. */
export const selectorTopicsMax = 1024;
/** Bytes of a `pattern=` glob. */
export const selectorPatternBytesMax = 249;
/** Topic-partitions one group's expansion holds; a larger match keeps its topics by name up to the first that does not fit. */
export const groupTopicPartitionsMax = 100_000;

export type GroupSelector =
  | { readonly kind: 'topic'; readonly topic: string }
  | { readonly kind: 'topics'; readonly topics: readonly string[] }
  | { readonly kind: 'pattern'; readonly pattern: string };

export interface TopicPartition {
  readonly topic: Topic;
  readonly partition: number;
}

export interface Expansion {
  /** The topics it covers, by name ascending. */
  readonly topics: readonly Topic[];
  /** Every topic-partition, topic by topic: a position is the engine's partition number. */
  readonly flat: readonly TopicPartition[];
  /** keyOf(topic, partition) → position in `flat`. */
  readonly indexOf: ReadonlyMap<string, number>;
}

/** A topic-partition's identity across expansions (a topic recreated under its name is another). */
export function keyOf(topicInternalId: number, partition: number): string {
  return `${topicInternalId}/${partition}`;
}

/** A group of several topics answers with `topic_assignments=<topic>:P<n>,...`; one topic with `assignments=[..]`. */
export function isMultiTopic(selector: GroupSelector): boolean {
  return selector.kind !== 'topic';
}

/** The selector as GROUP_STATUS shows it (`topic_name`): the topic, the topics comma-separated, or the glob. */
export function selectorText(selector: GroupSelector): string {
  if (selector.kind === 'topic') return selector.topic;
  return selector.kind === 'topics' ? selector.topics.join(',') : selector.pattern;
}

export function sameSelector(a: GroupSelector, b: GroupSelector): boolean {
  return selectorText(a) === selectorText(b) && a.kind === b.kind;
}

/** Whether the selector takes the topic named `name` (whether or not it exists). */
export function selects(selector: GroupSelector, name: string): boolean {
  if (selector.kind === 'topic') return selector.topic === name;
  if (selector.kind === 'topics') return selector.topics.includes(name);
  return globMatches(selector.pattern, name);
}

/**
 * Whether `name` matches the glob (`*` any run, `?` one character, anything else itself). The
 * usual greedy matcher with one backtrack point: linear in practice, never exponential.
 */
export function globMatches(pattern: string, name: string): boolean {
  const p = [...pattern];
  const s = [...name];
  let i = 0;
  let j = 0;
  let star = -1;
  let resume = 0;
  while (j < s.length) {
    if (i < p.length && (p[i] === '?' || (p[i] !== '*' && p[i] === s[j]))) {
      i++;
      j++;
    } else if (i < p.length && p[i] === '*') {
      star = i++;
      resume = j;
    } else if (star >= 0) {
      i = star + 1;
      j = ++resume;
    } else {
      return false;
    }
  }
  while (i < p.length && p[i] === '*') i++;
  return i === p.length;
}

/** The Cursus topics: those of the default namespace, less those `visible` hides. */
export function cursusTopics(all: readonly Topic[], visible: (name: string) => boolean): Topic[] {
  return all.filter((t) => t.namespace === defaultNamespaceName && visible(t.name));
}

/** The selector's expansion over `topics` (the Cursus topics that exist now). */
export function expand(selector: GroupSelector, topics: readonly Topic[]): Expansion {
  const chosen = topics.filter((t) => selects(selector, t.name)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const kept: Topic[] = [];
  const flat: TopicPartition[] = [];
  const indexOf = new Map<string, number>();
  for (const topic of chosen) {
    if (flat.length + topic.partitions > groupTopicPartitionsMax) break;
    kept.push(topic);
    for (let partition = 0; partition < topic.partitions; partition++) {
      indexOf.set(keyOf(topic.internalId, partition), flat.length);
      flat.push({ topic, partition });
    }
  }
  return { topics: kept, flat, indexOf };
}

/** Whether two expansions cover the same topic-partitions (same topics, same partition counts). */
export function sameExpansion(a: Expansion, b: Expansion): boolean {
  if (a.flat.length !== b.flat.length || a.topics.length !== b.topics.length) return false;
  return a.topics.every((t, i) => t.internalId === b.topics[i]!.internalId && t.partitions === b.topics[i]!.partitions);
}

/** The expansion as the registration stores it: each topic's name and partition count. */
export function storedExpansion(e: Expansion): Array<{ topic: string; partitions: number }> {
  return e.topics.map((t) => ({ topic: t.name, partitions: t.partitions }));
}

/** A stored selector, or null when the record is not one (a record of a later version, damage). */
export function parseStoredSelector(value: unknown): GroupSelector | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as { kind?: unknown; topic?: unknown; topics?: unknown; pattern?: unknown };
  if (v.kind === 'topic' && typeof v.topic === 'string' && v.topic !== '') return { kind: 'topic', topic: v.topic };
  if (v.kind === 'topics' && Array.isArray(v.topics) && v.topics.length > 0 && v.topics.every((t) => typeof t === 'string' && t !== '')) {
    return { kind: 'topics', topics: v.topics as string[] };
  }
  if (v.kind === 'pattern' && typeof v.pattern === 'string' && v.pattern !== '') return { kind: 'pattern', pattern: v.pattern };
  return null;
}
