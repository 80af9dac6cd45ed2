// Protocol-name mapping shared by the front-ends (docs/mapping.md). Neutral on purpose: the Kafka
// front-end imports it to list and resolve topics of non-default namespaces (Iggy streams), the
// Iggy front-end to say which Kafka name a topic has.
//
// The rule, both ways:
//   catalog (namespace 'default', topic t)  <->  Kafka topic t              (t a legal Kafka name)
//   catalog (namespace n != 'default', t)   <->  Kafka topic esc(n) '.' esc(t)
// where esc() keeps [A-Za-z0-9-] and writes every other UTF-8 byte as '_' + two lowercase hex
// digits ('.' -> _2e, '_' -> _5f, ' ' -> _20). An escaped part never contains '.', so a mapped
// name has exactly one '.', and decoding is exact. Resolving a Kafka name tries the default
// namespace first (a default topic named 'a.b' shadows stream 'a' / topic 'b'; the shadowed topic
// is not listed to Kafka), then the split. Names longer than Kafka's 249 characters are not
// visible to Kafka.

export const defaultNamespace = 'default';
/** Kafka's topic name limit (kafka.common.internals.Topic.MAX_NAME_LENGTH). */
export const kafkaTopicNameBytesMax = 249;

const legalKafka = /^[A-Za-z0-9._-]+$/;
const plain = /^[A-Za-z0-9-]$/;

export function isLegalKafkaTopicName(name: string): boolean {
  return name.length > 0 && name.length <= kafkaTopicNameBytesMax && name !== '.' && name !== '..' && legalKafka.test(name);
}

/** esc(): [A-Za-z0-9-] kept, every other UTF-8 byte as _xx. */
export function escapeNamePart(part: string): string {
  let out = '';
  for (const ch of part) {
    if (plain.test(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += `_${b.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/** Inverse of escapeNamePart; null when `part` is not a valid escaped string. */
export function unescapeNamePart(part: string): string | null {
  if (part.length === 0) return null;
  const bytes: number[] = [];
  for (let i = 0; i < part.length; i++) {
    const c = part[i]!;
    if (c === '_') {
      const hex = part.slice(i + 1, i + 3);
      if (!/^[0-9a-f]{2}$/.test(hex)) return null;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (plain.test(c)) {
      bytes.push(c.charCodeAt(0));
    } else {
      return null;
    }
  }
  const text = Buffer.from(bytes).toString('utf8');
  // Reject non-canonical input (invalid UTF-8, or an escape of a byte that stays plain).
  return escapeNamePart(text) === part ? text : null;
}

/** The Kafka topic name of a catalog topic, or null when Kafka cannot name it. */
export function kafkaTopicNameFor(namespace: string, topic: string): string | null {
  const name = namespace === defaultNamespace ? topic : `${escapeNamePart(namespace)}.${escapeNamePart(topic)}`;
  return isLegalKafkaTopicName(name) ? name : null;
}

export interface CatalogTopicName {
  namespace: string;
  topic: string;
}

/**
 * Where a Kafka topic name may live, in resolution order: the default namespace first, then the
 * namespace/topic split (only when the name has exactly one '.' and both parts decode, and the
 * namespace part is not 'default').
 */
export function catalogCandidatesForKafkaName(name: string): CatalogTopicName[] {
  const out: CatalogTopicName[] = [{ namespace: defaultNamespace, topic: name }];
  const dot = name.indexOf('.');
  if (dot > 0 && dot === name.lastIndexOf('.')) {
    const namespace = unescapeNamePart(name.slice(0, dot));
    const topic = unescapeNamePart(name.slice(dot + 1));
    if (namespace !== null && topic !== null && namespace !== defaultNamespace) out.push({ namespace, topic });
  }
  return out;
}

/** Resolves a Kafka topic name against something that can look topics up (e.g. the Catalog). */
export function resolveKafkaTopicName<T>(name: string, lookup: (n: CatalogTopicName) => T | null): T | null {
  for (const candidate of catalogCandidatesForKafkaName(name)) {
    const found = lookup(candidate);
    if (found !== null) return found;
  }
  return null;
}

/**
 * The Kafka-visible name of every topic: the mapped name, minus unnameable and shadowed ones
 * (a non-default topic whose mapped name equals a default-namespace topic's name).
 */
export function kafkaVisibleTopics<T extends { namespace: string; name: string }>(topics: readonly T[]): Array<{ kafkaName: string; topic: T }> {
  const defaults = new Set(topics.filter((t) => t.namespace === defaultNamespace).map((t) => t.name));
  const out: Array<{ kafkaName: string; topic: T }> = [];
  for (const topic of topics) {
    const kafkaName = kafkaTopicNameFor(topic.namespace, topic.name);
    if (kafkaName === null) continue;
    if (topic.namespace !== defaultNamespace && defaults.has(kafkaName)) continue;
    out.push({ kafkaName, topic });
  }
  return out;
}

// Felix (docs/mapping.md "Catalog ↔ Felix"): a Felix stream is named by tenant, namespace and
// stream, a catalog topic by namespace and topic. The tenant and namespace pair is one catalog
// namespace:
//   (tenant 'default', namespace n)  <->  catalog namespace n                  (n without '.')
//   (tenant t != 'default', n)       <->  catalog namespace t '.' n            (t, n without '.')
// and the stream is the topic, its shards the partitions. A name with '.' in a part, an empty
// part, and a catalog namespace 'default.<n>' or with two dots have no Felix name, so the mapping
// is one to one: Felix stream `orders` of tenant `default`, namespace `default` is Kafka topic
// `orders`.

export const felixDefaultTenant = 'default';

/** Where a Felix stream's tenant and namespace live in the catalog, or null when they cannot. */
export function catalogNamespaceForFelix(tenantId: string, namespace: string): string | null {
  if (tenantId === '' || namespace === '' || tenantId.includes('.') || namespace.includes('.')) return null;
  return tenantId === felixDefaultTenant ? namespace : `${tenantId}.${namespace}`;
}

/** The Felix tenant and namespace of a catalog namespace, or null when Felix cannot name it. */
export function felixNamesForCatalogNamespace(catalogNamespace: string): { tenantId: string; namespace: string } | null {
  const parts = catalogNamespace.split('.');
  if (parts.some((p) => p === '')) return null;
  if (parts.length === 1) return { tenantId: felixDefaultTenant, namespace: parts[0]! };
  if (parts.length === 2 && parts[0] !== felixDefaultTenant) return { tenantId: parts[0]!, namespace: parts[1]! };
  return null;
}
