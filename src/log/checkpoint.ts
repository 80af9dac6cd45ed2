// Two small checkpoint files in the partition directory, both written atomically (temp file,
// fsync, rename, fsync dir) and both 16 bytes:
//
// - `log-start-offset.checkpoint`: where DeleteRecords / purge moved the start of the log, which
//   segment names alone cannot say when the start falls inside a segment.
// - `recovery-point.checkpoint`: the base offset of the oldest segment that may hold data not yet
//   synced. Every segment below it is synced; after an unclean stop, recovery re-validates every
//   segment from it on (docs/log-format.md "Recovery"). Under 'interval' a roll syncs the sealed
//   segment in the background instead of making appends wait, so the segment before the active
//   one may be unsynced for a while.
//
// | offset | size | field  | notes                                                    |
// |--------|------|--------|----------------------------------------------------------|
// | 0      | 4    | magic  | 0x514C534F ("QLSO", log start), 0x514C5250 ("QLRP", recovery point) |
// | 4      | 8    | offset | i64                                                      |
// | 12     | 4    | crc    | CRC32C of bytes 0..11                                    |

import { crc32c } from '../base/native.js';
import { join } from 'node:path';
import { readSmallFile, writeFileAtomic, type LogFileSystem } from './fs.js';

export const checkpointFileName = 'log-start-offset.checkpoint';
export const recoveryPointFileName = 'recovery-point.checkpoint';
const checkpointMagic = 0x514c534f;
const recoveryPointMagic = 0x514c5250;
const checkpointBytes = 16;
const twoPow32 = 2 ** 32;

export function encodeCheckpoint(offset: number, magic = checkpointMagic): Buffer {
  const buf = Buffer.alloc(checkpointBytes);
  buf.writeUInt32BE(magic, 0);
  buf.writeUInt32BE(Math.floor(offset / twoPow32), 4);
  buf.writeUInt32BE(offset % twoPow32, 8);
  buf.writeUInt32BE(crc32c(buf.subarray(0, 12)), 12);
  return buf;
}

/** The offset, or a reason the bytes are not a valid checkpoint. */
export function decodeCheckpoint(buf: Buffer, magic = checkpointMagic): number | string {
  if (buf.length !== checkpointBytes) return 'bad size';
  if (buf.readUInt32BE(0) !== magic) return 'bad magic';
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

export function writeRecoveryPoint(fsys: LogFileSystem, dir: string, offset: number): Promise<void> {
  return writeFileAtomic(fsys, join(dir, recoveryPointFileName), encodeCheckpoint(offset, recoveryPointMagic));
}

/** The stored recovery point, null when there is none, or a reason when the file is damaged. */
export async function readRecoveryPoint(fsys: LogFileSystem, dir: string): Promise<number | null | string> {
  const buf = await readSmallFile(fsys, join(dir, recoveryPointFileName));
  return buf === null ? null : decodeCheckpoint(buf, recoveryPointMagic);
}
