// AlterUserScramCredentials (key 51), v0. Grammar: codec/messages/alter-user-scram-credentials.ts.
//
// Sets or deletes the SCRAM credential of one mechanism of a Quartet user (core/users.ts
// setScramCredential): an upsertion sends the salt, iterations and SaltedPassword, from which the
// stored and server keys are derived; the password (PLAIN, Iggy) and the other mechanism are left
// as they are. Per user, all or nothing, with Kafka's answers (ZkAdminManager /
// ScramControlManager):
//   empty user name                                  → UNACCEPTABLE_CREDENTIAL (93)
//   the same user and mechanism twice in the request → DUPLICATE_RESOURCE (92)
//   a mechanism other than SCRAM-SHA-256/512         → UNSUPPORTED_SASL_MECHANISM (33)
//   iterations below 4096 or above 16384             → UNACCEPTABLE_CREDENTIAL (93)
//   an empty salt, or a SaltedPassword of the wrong length → UNACCEPTABLE_CREDENTIAL (93)
//   deleting a credential the user does not have     → RESOURCE_NOT_FOUND (91)
// Where Quartet differs: credentials belong to existing users, so a name that is no Quartet user →
// RESOURCE_NOT_FOUND (create users with Iggy CreateUser or `quartet user`); Kafka needs ALTER on
// the cluster, Quartet manage_users (../access.ts), else CLUSTER_AUTHORIZATION_FAILED (31); only
// root (or a connection without SASL) may change root's credentials, and a restricted user only the
// credentials of users holding no right it lacks (a credential set is a login as that user).

import { grantsOf, rightNotHeld } from '../../../core/access.js';
import type { ScramMechanism, User } from '../../../core/users.js';
import { scramCredentialFromSalted } from '../../../core/users.js';
import { kafkaAccessOf } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import type { RequestOf } from '../codec/messages/index.js';
import { kafkaCodeOf } from '../errors.js';
import { saltedPasswordBytes, scramIterationsMax, scramIterationsMin, scramMechanismOf } from '../scram-credentials.js';
import { defineHandler, type KafkaFrontend } from './types.js';

type Request = RequestOf<typeof ApiKey.AlterUserScramCredentials>;
type Upsertion = Request['upsertions'][number];
type Outcome = { errorCode: number; errorMessage: string | null };

const ok: Outcome = { errorCode: 0, errorMessage: null };

function refusal(errorCode: number, errorMessage: string): Outcome {
  return { errorCode, errorMessage };
}

function checkUpsertion(u: Upsertion, mechanism: ScramMechanism): Outcome | null {
  if (u.iterations < scramIterationsMin) return refusal(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations');
  if (u.iterations > scramIterationsMax) return refusal(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too many iterations');
  if (u.salt.length === 0) return refusal(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Salt must not be empty');
  if (u.saltedPassword.length !== saltedPasswordBytes[mechanism]) return refusal(ErrorCode.UNACCEPTABLE_CREDENTIAL, `SaltedPassword must be ${saltedPasswordBytes[mechanism]} bytes for SCRAM-${mechanism}`);
  return null;
}

/** Checks every change to one user by `caller` (null: unrestricted); null when they may all be applied. */
function checkUser(frontend: KafkaFrontend, caller: User | null, user: string, deletions: Request['deletions'], upsertions: Upsertion[]): Outcome | null {
  if (user === '') return refusal(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty');
  const mechanisms = [...deletions.map((d) => d.mechanism), ...upsertions.map((u) => u.mechanism)];
  if (new Set(mechanisms).size !== mechanisms.length) return refusal(ErrorCode.DUPLICATE_RESOURCE, 'A user credential cannot be altered twice in the same request');
  if (mechanisms.some((m) => scramMechanismOf(m) === null)) return refusal(ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'Unknown SCRAM mechanism');
  for (const u of upsertions) {
    const problem = checkUpsertion(u, scramMechanismOf(u.mechanism)!);
    if (problem !== null) return problem;
  }
  const target = frontend.broker.users.get(user);
  if (target === null) return refusal(ErrorCode.RESOURCE_NOT_FOUND, `There is no Quartet user '${user}': create it first (Iggy CreateUser or quartet user create)`);
  if (target.root && caller !== null) return refusal(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Only root may change root's credentials");
  const missing = caller === null || caller.id === target.id ? null : rightNotHeld(caller, grantsOf(target));
  if (missing !== null) return refusal(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, `User '${user}' holds ${missing}, which the caller does not`);
  const held = new Set((frontend.broker.users.scramMechanismsOf(user) ?? []).map((m) => m.mechanism));
  if (deletions.some((d) => !held.has(scramMechanismOf(d.mechanism)!))) return refusal(ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist');
  return null;
}

async function applyUser(frontend: KafkaFrontend, user: string, deletions: Request['deletions'], upsertions: Upsertion[]): Promise<Outcome> {
  try {
    for (const d of deletions) await frontend.broker.users.setScramCredential(user, scramMechanismOf(d.mechanism)!, null);
    for (const u of upsertions) {
      const mechanism = scramMechanismOf(u.mechanism)!;
      await frontend.broker.users.setScramCredential(user, mechanism, scramCredentialFromSalted(Buffer.from(u.saltedPassword), mechanism, Buffer.from(u.salt), u.iterations));
    }
    frontend.logger.info('altered SCRAM credentials', { user, deleted: deletions.length, upserted: upsertions.length });
    return ok;
  } catch (err) {
    return { errorCode: kafkaCodeOf(err), errorMessage: err instanceof Error ? err.message : String(err) };
  }
}

export const alterUserScramCredentialsHandler = defineHandler({
  apiKey: ApiKey.AlterUserScramCredentials,
  minVersion: 0,
  maxVersion: 0,
  async handle(request, { frontend, session }) {
    const access = kafkaAccessOf(frontend, session);
    const callerId = session.principalUserId;
    const caller = !access.restricted ? null : callerId === undefined || callerId === null ? null : frontend.broker.users.get(callerId);
    const users = [...new Set([...request.deletions.map((d) => d.name), ...request.upsertions.map((u) => u.name)])];
    const results = [];
    for (const user of users) {
      const deletions = request.deletions.filter((d) => d.name === user);
      const upsertions = request.upsertions.filter((u) => u.name === user);
      let outcome: Outcome;
      if (!access.cluster('alterUsers')) outcome = refusal(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'Authorization failed.');
      else if (access.restricted && caller === null) outcome = refusal(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'Authorization failed.');
      else outcome = checkUser(frontend, caller, user, deletions, upsertions) ?? (await applyUser(frontend, user, deletions, upsertions));
      results.push({ user, ...outcome });
    }
    return { throttleTimeMs: 0, results };
  },
  errorResponse(request, errorCode) {
    const users = [...new Set([...request.deletions.map((d) => d.name), ...request.upsertions.map((u) => u.name)])];
    return { throttleTimeMs: 0, results: users.map((user) => ({ user, errorCode, errorMessage: null })) };
  },
});
