// The error texts a Felix broker sends, exactly as the reference broker words them (notes §10;
// docs/protocols/felix-wire-v1.md §8): clients match some of them, so they are fixed here once.
// They travel in {"type":"error","message":...}, publish_error.message and binary error acks.

export const ErrorText = {
  authFailed: 'auth failed',
  authRequired: 'auth required',
  authAlreadyEstablished: 'auth already established',
  tenantMismatch: 'tenant mismatch',
  forbidden: 'forbidden',
  unsupportedFrameFlags: 'unsupported frame flags',
  unexpectedMessageType: 'unexpected message type',
  cursorErrorFromClient: 'subscribe_cursor_error is a server-to-client message',
  maxSubscriptions: 'max subscriptions per connection exceeded',
  subscriberLaneFull: 'subscriber lane queue full during register',
  serverOverloaded: 'server overloaded',
  ingressOverloaded: 'ingress overloaded',
  malformedPublishBatch: 'malformed publish batch',
  malformedAckedPrefix: 'malformed acked publish prefix',
  missingRequestId: 'missing request_id for acked publish',
} as const;

export function streamNotFound(tenantId: string, namespace: string, stream: string): string {
  return `stream not found: tenant=${tenantId} namespace=${namespace} stream=${stream}`;
}

export function tenantNotFound(tenantId: string): string {
  return `tenant not found: ${tenantId}`;
}

export function namespaceNotFound(tenantId: string, namespace: string): string {
  return `namespace not found: tenant=${tenantId} namespace=${namespace}`;
}

export function cacheScopeNotFound(tenantId: string, namespace: string, cache: string): string {
  return `cache scope not found: ${tenantId}/${namespace}/${cache}`;
}

/** QUIC application close codes (notes §4). */
export const CloseCode = {
  /** The broker is shutting down. */
  shutdown: 0,
  /** No stream authenticated within the auth timeout. */
  authTimeout: 1,
} as const;
