// What a stored batch is, shared by the log (which stores and reads batches) and the protocol
// codecs (which write and read them): the format tags, the append request, the stored batch as
// read back, the neutral record and the per-format codec contract. src/log/types.ts re-exports
// them with the rest of the log's contract.

/** The protocol a stored batch was written in. Stored in the envelope; never changes. */
export const BatchFormat = {
  /** Kafka RecordBatch v2, verbatim (baseOffset and partitionLeaderEpoch patched). */
  kafka: 1,
  /** Iggy 0.11 messages batch, as stamped by the broker. */
  iggy: 2,
  /** Cursus Wire v2 batch. */
  cursus: 3,
  /** Felix wire v1 batch. */
  felix: 4,
  /** Quartet's own neutral record encoding (src/log/neutral-format.ts): used by tests and tools. */
  neutral: 15,
} as const;
export type BatchFormat = (typeof BatchFormat)[keyof typeof BatchFormat];

/** Envelope flag bits. */
export const BatchFlags = {
  /** Part of a transaction (Kafka/Cursus): invisible to read_committed until its marker. */
  transactional: 1 << 0,
  /** A control batch (commit/abort marker); carries no user records. */
  control: 1 << 1,
} as const;

/** What an appender hands the log: one protocol batch of one or more records. */
export interface AppendRequest {
  format: BatchFormat;
  /** Number of offsets the batch occupies (>= 1). Offsets baseOffset .. baseOffset+count-1. */
  recordCount: number;
  /** Timestamp of the first record (ms). */
  firstTimestamp: number;
  /** Largest record timestamp in the batch (ms); used by the time index and retention. */
  maxTimestamp: number;
  /** -1 when the producer is not idempotent. */
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  /** BatchFlags bits. */
  flags: number;
  /**
   * The batch's time is when the log appends it (as Kafka's LogAppendTime; Iggy stamps its
   * base_timestamp so): the log sets firstTimestamp and maxTimestamp to the append time (ms,
   * floored; AppendStamp.appendTime) when it assigns the offset, so the envelope, the time index
   * and age retention all see it.
   */
  logAppendTime?: boolean;
  /**
   * The protocol's batch bytes. Its format's codec stamps them in place when the offset is
   * assigned (BatchFormatCodec.stamp). The log may keep a view of them until the append settles
   * and never after: then the caller may reuse the buffer (request frames from the buffer pool go
   * back to it).
   */
  payload: Buffer;
  /**
   * What the format's codec needs besides the bytes to stamp them (BatchFormatCodec.stamp), set
   * by the codec's own request builder (Iggy: the partition id and the checksum input its
   * validation kept). Data, never a function; opaque to the log and the core.
   */
  stampInput?: unknown;
  /**
   * A CRC32C over payload[from..] that the front-end has already VERIFIED (Kafka's batch CRC
   * covers bytes 21..end). The log stores it instead of checksumming the payload again; the bytes
   * before `from` are checksummed by the log. Read after the stamp, so a codec whose stamp
   * rewrites bytes at or after `from` updates `value`. A wrong value makes the batch fail
   * verification.
   */
  payloadCrc32c?: { from: number; value: number } | undefined;
}

/** What the log assigns a batch as it appends it, for its format's codec to stamp (BatchFormatCodec.stamp). */
export interface AppendStamp {
  baseOffset: number;
  /** The append time in ms: the envelope's time. */
  appendTime: number;
  /** The same moment in µs (floor(appendMicros / 1000) = appendTime), for formats that stamp µs (Iggy's base_timestamp). */
  appendMicros: number;
}

/** A byte range of an open log file (see ReadOptions.fileSlicesMin). */
export interface FileSlice {
  readonly fd: number;
  readonly position: number;
  readonly length: number;
  /**
   * The stored CRC32C of the range's bytes from `from` on (a log slice's payload; the bytes before
   * were checked with the envelope header when the slice was made). Whoever reads the range's
   * bytes checks them against it; bytes sent with sendfile are checked by the log's scrubber.
   */
  readonly payloadCrc?: { readonly from: number; readonly value: number };
}

/**
 * Payload bytes a file-sliced StoredBatch still carries in `payload` (its first ones): enough for
 * an Iggy batch header and its first frame header (256 + 48), which a poll reads to decide whether
 * to send the batch as stored.
 */
export const fileSliceHeadBytes = 320;

/** A batch as read back. `payload` is a view into a buffer shared with neighbouring batches. */
export interface StoredBatch {
  format: BatchFormat;
  flags: number;
  baseOffset: number;
  /** baseOffset + recordCount - 1. */
  lastOffset: number;
  recordCount: number;
  firstTimestamp: number;
  maxTimestamp: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  payload: Buffer;
  /**
   * Set only by reads with `fileSlicesMin`, for payloads at least that large: the whole payload is
   * this range of a segment file (kept open by the read's lease until it is released), and
   * `payload` holds only its first `fileSliceHeadBytes` bytes.
   */
  file?: FileSlice;
}

/** A record in protocol-neutral form: what transcoding and compaction work on. */
export interface NeutralRecord {
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: Array<{ key: string; value: Buffer | null }>;
}

/**
 * What the log needs to know about a format: how to stamp a batch as it appends it, and how to
 * look inside its batches (compaction keeps the last record per key). Front-ends provide one per
 * format; the broker is built with a registry of them (src/log/formats.ts).
 */
export interface BatchFormatCodec {
  format: BatchFormat;
  /**
   * Writes what the log assigned into the batch's own bytes (Kafka: baseOffset, and the time of a
   * LogAppendTime batch; Iggy: base_offset, base_timestamp and partition_id, and the batch
   * checksum). The log calls it synchronously once the offset is assigned and before the bytes
   * are checksummed and written. It must not change the payload's length, and it updates
   * `request.payloadCrc32c` if it rewrites bytes that covers. A format without it is stored as
   * given (the neutral format carries no offsets).
   */
  stamp?(request: AppendRequest, assigned: AppendStamp): void;
  /** The records of a stored batch, with absolute offsets. Throws on a corrupt payload. */
  decode(batch: StoredBatch): NeutralRecord[];
  /**
   * The first `countMax` records at offsets >= `fromOffset` only, for a format whose batches may
   * hold very many records (an Iggy batch up to a million): the others are not decoded.
   */
  decodeRange?(batch: StoredBatch, fromOffset: number, countMax: number): NeutralRecord[];
  /**
   * How many records the batch holds, read from its head alone (the first fileSliceHeadBytes of
   * the payload, all a file-sliced batch carries), or null when the head does not say. Equal to
   * `batch.recordCount` (its offset span) means every offset of the batch holds a record; fewer,
   * that compaction removed some.
   */
  messageCount?(batch: StoredBatch): number | null;
  /**
   * The bytes decoding the batch produces at most, as its headers tell before any decoding (a
   * compressed batch's decoded size: a few KB may inflate to 64 MiB), for the worker pool's size
   * rule (core/offload.ts); absent, its payload's length.
   */
  decodedBytes?(batch: StoredBatch): number;
  /**
   * The records of a stored batch of this format in [fromOffset, toOffsetExclusive) (the first
   * `countMax` of them) as bytes of this format cut from the stored ones, without decoding them;
   * null when none is kept or the batch does not parse. A format without it is served whole (its
   * readers skip the records before their offset) or transcoded.
   */
  slice?(batch: StoredBatch, fromOffset: number, toOffsetExclusive: number, countMax: number): BatchSlice | null;
  /**
   * Encodes records (offsets ascending, all >= baseOffset) into one payload of this format whose
   * base offset is `baseOffset`. Used to rewrite batches during compaction and to transcode.
   */
  encode(records: NeutralRecord[], baseOffset: number, template: StoredBatch): AppendRequest;
}

/** Part of a stored batch, in its own format (BatchFormatCodec.slice). */
export interface BatchSlice {
  /** The batch bytes: the stored ones, or a new header followed by views of the kept records. */
  chunks: Buffer[];
  /** Records kept. */
  count: number;
  /** Offset of the last record kept. */
  lastOffset: number;
}
