// The Kafka codec's public surface: pure functions from bytes to typed frames and back.
export * from './api-keys.js';
export * from './compression.js';
export * from './errors.js';
export * from './framer.js';
export * from './frames.js';
export * from './headers.js';
export * from './kafka-format.js';
export * from './messages/index.js';
export * from './reader.js';
export * from './record-batch.js';
export * from './schema.js';
export * from './writer.js';
