// The partition log's public API. Layers above import from here only.

export * from './types.js';
export { MemoryLog, type MemoryLogOptions } from './memory-log.js';
export { BufferLease } from '../base/buffer-pool.js';
export { FormatRegistry, createFormatRegistry } from './formats.js';
export {
  encodeNeutralBatch,
  decodeNeutralBatch,
  encodeNeutralPayload,
  decodeNeutralPayload,
  neutralCodec,
  type NeutralRecordInput,
  type NeutralBatchOptions,
} from './neutral-format.js';
export { deleteRetentionMsDefault, type LogConfigExtras } from './common.js';
export { openFileLog, FileLog, type FileLogOptions } from './file-log.js';
export type { LogOffload } from './compaction-offload.js';
export { DirectWriteGate, defaultDirectWriteGate, type DirectWriteGateOptions } from './direct-write.js';
export { nodeFileSystem, FaultyFileSystem, fsError, type LogFileSystem, type OpenMode } from './fs.js';
export { verifyPartitionDir, dumpPartitionDir, type VerifyReport, type VerifyProblem, type DumpedBatch } from './verify.js';
