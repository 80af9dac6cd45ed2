// What a SASL mechanism step returns, shared by PLAIN and SCRAM. Peer mistakes are values, never
// throws: the Kafka handler turns a failure into SaslAuthenticate error_code + error_message (or,
// on the raw v0 token path kafka-python uses, a closed connection).

/** The Kafka codes a failure maps to (Errors.java: 33, 34, 58). */
export const SaslKafkaError = {
  UNSUPPORTED_SASL_MECHANISM: 33,
  ILLEGAL_SASL_STATE: 34,
  SASL_AUTHENTICATION_FAILED: 58,
} as const;

export type SaslKafkaErrorCode = (typeof SaslKafkaError)[keyof typeof SaslKafkaError];

export interface SaslStepOk {
  /** The server's next token; empty when the mechanism has nothing more to say. */
  token: Buffer;
  /** True once the client is authenticated. */
  done: boolean;
  /** The authenticated user, when done. */
  user?: string;
}

export interface SaslStepFailure {
  /** A stable reason: an RFC 5802 server-error-value for SCRAM, or our own for the rest. */
  error: string;
  /** Safe to send to the client: never says whether the user exists. */
  message: string;
  kafkaErrorCode: SaslKafkaErrorCode;
  /** SCRAM's `e=...` server-final message, for transports that forward it. */
  token?: Buffer;
}

export type SaslStepResult = SaslStepOk | SaslStepFailure;

export function isSaslFailure(result: SaslStepResult | { ok: true }): result is SaslStepFailure {
  return 'error' in result;
}

export function authFailure(error: string, message = 'Authentication failed: invalid credentials', token?: Buffer): SaslStepFailure {
  return token === undefined
    ? { error, message, kafkaErrorCode: SaslKafkaError.SASL_AUTHENTICATION_FAILED }
    : { error, message, kafkaErrorCode: SaslKafkaError.SASL_AUTHENTICATION_FAILED, token };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes UTF-8 or returns null for invalid bytes (TextDecoder with fatal: true). */
export function decodeUtf8(bytes: Buffer): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}
