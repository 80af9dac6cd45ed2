// Cursus v1 compatibility (docs/protocols/cursus-v1.md): the real Cursus v1 protocol, byte for
// byte, over the Wire v2 handlers, for the existing Go, Java and Python SDKs. Opt-in: the
// connection hands a v1 connection (isV1Start) to a V1Framer and a V1Session.
//
//   isV1Start(first bytes)            -> v1 or not (Wire v2 opens with CRS2)
//   framer.push(chunk)                -> bodies (u32 length-prefixed; 16 MiB; oversize closes)
//   session.handle(body)              -> classify (batch / command / envelope) -> CursusRequest
//                                        -> dispatch -> CursusReply -> v1 bytes on the output

export * from './batch.js';
export * from './classify.js';
export * from './commands.js';
export * from './compression.js';
export * from './convert.js';
export * from './epochs.js';
export * from './errors.js';
export * from './framing.js';
export * from './mapping.js';
export * from './negotiate.js';
export * from './render.js';
export * from './session.js';
