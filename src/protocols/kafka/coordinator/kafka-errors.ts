// The Kafka error codes the group coordinator answers with. Numbers are the wire values from
// apache/kafka clients/src/main/java/org/apache/kafka/common/protocol/Errors.java; names are
// Kafka's own so that a reader can grep both code bases. The codec's full table may absorb this
// one later; until then the handlers can use it directly.

export const KafkaError = {
  UNKNOWN_SERVER_ERROR: -1,
  NONE: 0,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  ILLEGAL_GENERATION: 22,
  INCONSISTENT_GROUP_PROTOCOL: 23,
  INVALID_GROUP_ID: 24,
  UNKNOWN_MEMBER_ID: 25,
  INVALID_SESSION_TIMEOUT: 26,
  REBALANCE_IN_PROGRESS: 27,
  NON_EMPTY_GROUP: 68,
  GROUP_ID_NOT_FOUND: 69,
  MEMBER_ID_REQUIRED: 79,
  GROUP_MAX_SIZE_REACHED: 81,
  FENCED_INSTANCE_ID: 82,
} as const;

export type KafkaErrorName = keyof typeof KafkaError;
export type KafkaErrorCode = (typeof KafkaError)[KafkaErrorName];

const nameByCode = new Map<number, KafkaErrorName>(
  (Object.keys(KafkaError) as KafkaErrorName[]).map((name) => [KafkaError[name], name]),
);

/** The Kafka name of a code from this table, for logs and test messages. */
export function kafkaErrorName(code: KafkaErrorCode): KafkaErrorName {
  const name = nameByCode.get(code);
  if (name === undefined) throw new Error(`not a coordinator error code: ${code}`);
  return name;
}
