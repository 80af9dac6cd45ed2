// FindCoordinator (key 10), v0-4. Quartet is a single node, so this node coordinates every group
// and every transactional id. v0-3 ask about one key (v0 has no key type and means a group); v4
// (KIP-699) batches keys of one type and answers one entry per key.
//
// apache/kafka KafkaApis.handleFindCoordinatorRequest / getCoordinator: key type 0 is GROUP, 1 is
// TRANSACTION; any other type fails CoordinatorType.forId with InvalidRequestException, which the
// request handler turns into INVALID_REQUEST for the whole request (v0-3: the top-level error with
// node -1; v4: every coordinator entry). Kafka's error answers carry Node.noNode (-1, "", -1).

import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { defineHandler, type KafkaFrontend } from './types.js';

/** FindCoordinatorRequest.CoordinatorType. */
export const CoordinatorKeyType = { group: 0, transaction: 1 } as const;

const noNode = { nodeId: -1, host: '', port: -1 } as const;

function coordinatorFor(frontend: KafkaFrontend, keyType: number): { errorCode: number; errorMessage: string | null; nodeId: number; host: string; port: number } {
  if (keyType !== CoordinatorKeyType.group && keyType !== CoordinatorKeyType.transaction) {
    return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `unknown coordinator key type ${keyType}`, ...noNode };
  }
  const { host, port } = frontend.advertised();
  return { errorCode: ErrorCode.NONE, errorMessage: null, nodeId: frontend.nodeId, host, port };
}

export const findCoordinatorHandler = defineHandler({
  apiKey: ApiKey.FindCoordinator,
  minVersion: 0,
  maxVersion: 4,
  errorResponse(request, errorCode, { version }) {
    const answer = { errorCode, errorMessage: null, ...noNode };
    return version < 4 ? { throttleTimeMs: 0, ...answer } : { throttleTimeMs: 0, coordinators: request.coordinatorKeys.map((key) => ({ key, ...answer })) };
  },
  handle(request, { frontend, version }) {
    const keyType = version >= 1 ? request.keyType : CoordinatorKeyType.group;
    const answer = coordinatorFor(frontend, keyType);
    if (version < 4) return { throttleTimeMs: 0, ...answer };
    return { throttleTimeMs: 0, coordinators: request.coordinatorKeys.map((key) => ({ key, ...answer })) };
  },
});
