// Kafka's SCRAM mechanism ids (ScramMechanism.java: UNKNOWN 0, SCRAM-SHA-256 1, SCRAM-SHA-512 2)
// and the iteration bounds Kafka accepts (ScramFormatter: at least 4096, at most 16384), shared by
// DescribeUserScramCredentials and AlterUserScramCredentials.

import type { ScramMechanism } from '../../core/users.js';

export const scramMechanismIds: Readonly<Record<ScramMechanism, number>> = { 'SHA-256': 1, 'SHA-512': 2 };
export const scramIterationsMin = 4096;
export const scramIterationsMax = 16384;
/** SaltedPassword is one hash output long. */
export const saltedPasswordBytes: Readonly<Record<ScramMechanism, number>> = { 'SHA-256': 32, 'SHA-512': 64 };

/** The mechanism of a Kafka id, or null for UNKNOWN and any other value. */
export function scramMechanismOf(id: number): ScramMechanism | null {
  if (id === 1) return 'SHA-256';
  if (id === 2) return 'SHA-512';
  return null;
}
