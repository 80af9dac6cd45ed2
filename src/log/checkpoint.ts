// The log-start-offset checkpoint (`log-start-offset.checkpoint` in the partition directory):
// where DeleteRecords / purge moved the start of the log, which segment names alone cannot say
// when the start falls inside a segment. Written atomically (temp file, fsync, rename, fsync dir).
//
// | offset | size | field          | notes                            |
// |--------|------|----------------|----------------------------------|
// | 0      | 4    | magic          | 0x514C534F ("QLSO")              |
// | 4      | 8    | logStartOffset | i64                              |
// | 12     | 4    | crc            | CRC32C of bytes 0..11            |

import { crc32c } from '../native/index.js';
import { join } from 'node:path';
import { readSmallFile, writeFileAtomic, type LogFileSystem } from './fs.js';

export const checkpointFileName = 'log-start-offset.checkpoint';
const checkpointMagic = 0x514c534f;
const checkpointBytes = 16;
const twoPow32 = 2 ** 32;

export function encodeCheckpoint(logStartOffset: number): Buffer {
  const buf = Buffer.alloc(checkpointBytes);
  buf.writeUInt32BE(checkpointMagic, 0);
  buf.writeUInt32BE(Math.floor(logStartOffset / twoPow32), 4);
  buf.writeUInt32BE(logStartOffset % twoPow32, 8);
  buf.writeUInt32BE(crc32c(buf.subarray(0, 12)), 12);
  return buf;
}

/** The offset, or a reason the bytes are not a valid checkpoint. */
export function decodeCheckpoint(buf: Buffer): number | string {
  if (buf.length !== checkpointBytes) return 'bad size';
  if (buf.readUInt32BE(0) !== checkpointMagic) return 'bad magic';
  if (crc32c(buf.subarray(0, 12)) !== buf.readUInt32BE(12)) return 'checksum mismatch';
  return buf.readUInt32BE(4) * twoPow32 + buf.readUInt32BE(8);
}

export function writeCheckpoint(fsys: LogFileSystem, dir: string, logStartOffset: number): Promise<void> {
  return writeFileAtomic(fsys, join(dir, checkpointFileName), encodeCheckpoint(logStartOffset));
}

/** The stored offset, null when there is none, or a reason when the file is damaged. */
export async function readCheckpoint(fsys: LogFileSystem, dir: string): Promise<number | null | string> {
  const buf = await readSmallFile(fsys, join(dir, checkpointFileName));
  return buf === null ? null : decodeCheckpoint(buf);
}
