// The Felix wire v1 codec (docs/protocols/felix-wire-v1.md): bytes to typed frames and back.
// Pure: no sockets, QUIC or storage.
//
// Broker flow for one QUIC stream:
//   framer.push(chunk)              -> frames (header checked; a bad one ends the stream)
//   decodeFrame(flags, payload)     -> message | publish batch | refused flags | malformed payload
//   auth: authReply(auth, server)   -> ok | auth_ok, and the peer's flags and features
//   raise framer.limits after auth (64 KiB before it)
//   replies: encodeMessage / encodePublishAck; events: EventBatchFrames (encoded once per batch)

export * from './capabilities.js';
export * from './decode.js';
export * from './errors.js';
export * from './event-batch.js';
export * from './frame.js';
export * from './framer.js';
export * from './json.js';
export * from './messages.js';
export * from './publish-ack.js';
export * from './publish-batch.js';
export * from './records.js';
export * from './values.js';
export * from './felix-format.js';
