// The Iggy 0.11 codec: bytes to typed frames and back. Pure: no sockets, files or storage.
//
// Server flow for one connection:
//   framer.push(chunk)                      -> whole frames (header + body views)
//   decodeRequestHeader(frame.header)       -> RequestHeader
//   validateRequestHeader(h, maxBytes)      -> null | { close | evict | status }
//   verifyRequestChecksum(h, frame.body)    -> false: Reply with status 4, empty body
//   resolveCommand(h)                       -> { code } | rejection
//   code 40 (operation Register)            -> decodeLoginRegisterBody(body) (password, then token)
//   decodeRequest(code, body)               -> { code, request } | reason (status 3, or its own code)
//   encodeReply(code, reply) / encodeResultError(errorCode)
//   encodeReplyFrame(h, body, { session, commit, status }) -> chunk list for writev
//   encodeEviction({ client, reason, ... }) -> 256 bytes

export * from './header.js';
export * from './framer.js';
export * from './primitives.js';
export * from './values.js';
export * from './errors.js';
export * from './message-batch.js';
export * from './iggy-format.js';
export * from './commands/index.js';
export { decodeLoginRegisterBody, loginRegisterBodyBytesMax, type LoginRegisterBody } from './commands/login.js';
export { validateSendMessagesBatch, parsePolledBatches, pollReplyHeadBytes, polledBuffers, resyncPartitionId } from './commands/messages.js';
export * as systemCommands from './commands/system.js';
export * as userCommands from './commands/users.js';
export * as loginCommands from './commands/login.js';
export * as tokenCommands from './commands/tokens.js';
export * as streamCommands from './commands/streams.js';
export * as topicCommands from './commands/topics.js';
export * as partitionCommands from './commands/partitions.js';
export * as segmentCommands from './commands/segments.js';
export * as messageCommands from './commands/messages.js';
export * as consumerOffsetCommands from './commands/consumer-offsets.js';
export * as consumerGroupCommands from './commands/consumer-groups.js';
