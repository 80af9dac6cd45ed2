// The Cursus Wire v2 codec (docs/protocols/cursus-wire-v2.md): bytes to typed frames and back.
// Pure: no sockets, files or storage.
//
// Broker flow for one connection:
//   framer.push(chunk)                   -> frames (header checked; a bad one closes the connection)
//   openFrame(frame.header, payload)     -> decoded payload | checksum_mismatch | decompression_failed
//   first frame: decodeNegotiationRequest -> negotiate() -> encodeNegotiationResponse
//   requests: decodeCommandPayload (CRQ2) or decodeBatch (CBV2, PUBLISH)
//   replies: encodeOkLine / encodeJsonEnvelope / encodeBatch / encodeErrorPayload / encodeStreamClose
//   encodeFrame(spec, payload)           -> chunks for writev

export * from './batch.js';
export * from './commands.js';
export * from './compression.js';
export * from './crq2.js';
export * from './cursus-format.js';
export * from './errors.js';
export * from './frame.js';
export * from './framer.js';
export * from './lines.js';
export * from './negotiate.js';
export * from './primitives.js';
