// DescribeUserScramCredentials (key 50), v0. Grammar: codec/messages/describe-user-scram-credentials.ts.
//
// Quartet's users are the SCRAM principals (core/users.ts: each user holds a SCRAM-SHA-256 and a
// SCRAM-SHA-512 credential, derived from its password or set by AlterUserScramCredentials). As
// Kafka's ScramControlManager: users null or empty → every user with a credential; a user named
// twice → DUPLICATE_RESOURCE (92); a user with no credential (or none at all) →
// RESOURCE_NOT_FOUND (91). Kafka needs DESCRIBE on the cluster; in Quartet reading users needs
// read_users (../access.ts), else CLUSTER_AUTHORIZATION_FAILED (31) at the top level.

import { kafkaAccessOf } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { scramMechanismIds } from '../scram-credentials.js';
import { defineHandler, type KafkaFrontend } from './types.js';

type Result = { user: string; errorCode: number; errorMessage: string | null; credentialInfos: Array<{ mechanism: number; iterations: number }> };

function credentialsOf(frontend: KafkaFrontend, user: string): Result {
  const mechanisms = frontend.broker.users.scramMechanismsOf(user) ?? [];
  if (mechanisms.length === 0) return { user, errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: `Attempt to describe a user credential that does not exist: ${user}`, credentialInfos: [] };
  return { user, errorCode: 0, errorMessage: null, credentialInfos: mechanisms.map((m) => ({ mechanism: scramMechanismIds[m.mechanism], iterations: m.iterations })) };
}

export const describeUserScramCredentialsHandler = defineHandler({
  apiKey: ApiKey.DescribeUserScramCredentials,
  minVersion: 0,
  maxVersion: 0,
  handle(request, { frontend, session }) {
    if (!kafkaAccessOf(frontend, session).cluster('describeUsers')) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Authorization failed.', results: [] };
    }
    if (request.users === null || request.users.length === 0) {
      const results = frontend.broker.users.list().map((u) => credentialsOf(frontend, u.username)).filter((r) => r.errorCode === 0);
      return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, results };
    }
    const counts = new Map<string, number>();
    for (const u of request.users) counts.set(u.name, (counts.get(u.name) ?? 0) + 1);
    const results = [...counts].map(([user, n]): Result =>
      n > 1
        ? { user, errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: `Cannot describe SCRAM credentials for the same user twice in a single request: ${user}`, credentialInfos: [] }
        : credentialsOf(frontend, user),
    );
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, results };
  },
});
