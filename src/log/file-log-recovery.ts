// Opening a partition log's directory: recovery after a clean or an unclean stop (see
// docs/log-format.md, "Recovery"): leftover files removed, segments opened (trusted below the
// recovery point, rescanned above it), a sealed segment that lost unsynced data cut with what
// follows it, overlaps repaired, the log-start checkpoint applied, the recovery point moved to
// the active segment and the clean-shutdown marker consumed. FileLog (file-log.ts) starts from
// what it returns.

import { join } from 'node:path';
import { QuartetError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import { readCheckpoint, readRecoveryPoint, writeRecoveryPoint } from './checkpoint.js';
import { preallocateBytesOf } from './file-log-state.js';
import type { LogFileSystem } from './fs.js';
import { cleanedSuffix, parseSegmentLogName, Segment, segmentPaths } from './segment.js';
import type { LogConfig } from './types.js';

/** Present only between a clean close and the next open: the indexes on disk are complete. */
export const cleanShutdownFileName = '.clean-shutdown';

export interface RecoveredLog {
  segments: Segment[];
  logStartOffset: number;
  /** The recovery point on disk after recovery (the active segment's base). */
  recoveryPoint: number;
}

/** Recovery at open: see docs/log-format.md, "Recovery". */
export async function recoverDirectory(fsys: LogFileSystem, dir: string, config: LogConfig, logger: Logger): Promise<RecoveredLog> {
  await fsys.mkdir(dir);
  const names = await fsys.readdir(dir);
  await removeLeftovers(fsys, dir, names, logger);
  const bases = names.map(parseSegmentLogName).filter((b): b is number => b !== null).sort((a, b) => a - b);
  const clean = names.includes(cleanShutdownFileName);
  // Which segments an unclean stop may have left with unsynced data: the active one, and one
  // before it whose background seal had not finished (WritePath.rollActive, file-log-writes.ts).
  // Segments below the recovery point are synced. A directory without one predates recovery
  // points (every open writes one): its sealed segments were synced when sealed. With a damaged
  // one, the last two are re-validated (a roll leaves at most one sealed segment unsynced, the one
  // before the active; an empty leftover of a failed create aside).
  const storedPoint = await readRecoveryPoint(fsys, dir);
  if (typeof storedPoint === 'string') logger.warn('ignoring a damaged recovery point checkpoint; re-validating the last two segments', { problem: storedPoint });
  const recoveryPoint = typeof storedPoint === 'number' ? storedPoint : null;
  const synced = (i: number): boolean => {
    if (i >= bases.length - 1) return false;
    if (storedPoint === null) return true;
    if (recoveryPoint === null) return i < bases.length - 2;
    return bases[i]! < recoveryPoint;
  };
  const segments: Segment[] = [];
  /** Sealed segments re-validated because they may hold unsynced data. */
  const unverified = new Set<Segment>();
  for (let i = 0; i < bases.length; i++) {
    const last = i === bases.length - 1;
    const trust = clean || synced(i);
    const { segment, report } = await Segment.open(fsys, dir, bases[i]!, config.indexIntervalBytes, trust, logger);
    segments.push(segment);
    if (!last && !trust) unverified.add(segment);
    // A sealed segment that may have lost unsynced data and did (its tail was cut, or, at or
    // above a recovery point, it ends short of the next segment's base: a loss that ended on a
    // batch boundary, or a cut made by a recovery that stopped before it removed what follows):
    // the later segments would leave a hole of acknowledged-then-lost offsets in the middle of
    // the log, so they go, newest first, and the recovered log is a prefix of what was written.
    // (Compaction, which leaves such gaps on purpose, only rewrites segments below the recovery
    // point; segments compacted before there were recovery points are trusted.) Damage in a
    // trusted segment cuts that segment alone, as before: what follows it was synced.
    // (An empty segment that starts below its predecessor's end is the leftover of a failed
    // create, which repairOverlaps removes: it lost nothing.)
    const leftover = segment.isEmpty && i > 0 && segments[i - 1]!.nextOffset > segment.baseOffset;
    const shortOfNext = recoveryPoint !== null && bases[i]! >= recoveryPoint && segment.nextOffset < (bases[i + 1] ?? Number.POSITIVE_INFINITY);
    if (!last && !trust && !leftover && (report.truncatedBytes > 0 || shortOfNext)) {
      logger.warn('a sealed segment lost data not yet synced; removing the segments after it', {
        file: segment.paths.log,
        end: segment.nextOffset,
        removed: bases.length - i - 1,
      });
      for (const base of bases.slice(i + 1).reverse()) {
        for (const path of Object.values(segmentPaths(dir, base))) if (await fsys.exists(path)) await fsys.unlink(path);
        await fsys.fsyncDir(dir);
      }
      break;
    }
  }
  await repairOverlaps(fsys, dir, segments, config, clean, logger);
  const checkpoint = await readCheckpoint(fsys, dir);
  if (typeof checkpoint === 'string') logger.warn('ignoring a damaged log-start checkpoint', { problem: checkpoint });
  let logStartOffset = Math.max(typeof checkpoint === 'number' ? checkpoint : 0, segments[0]?.baseOffset ?? 0);
  const endOffset = segments.at(-1)?.nextOffset ?? 0;
  if (logStartOffset > endOffset) {
    // Everything on disk is below the start the checkpoint promises: start empty at the checkpoint.
    logger.warn('log start checkpoint beyond the data; starting empty there', { logStartOffset, endOffset });
    for (const segment of segments.splice(0)) await segment.delete();
  }
  if (segments.length === 0) segments.push(await Segment.create(fsys, dir, logStartOffset, config.indexIntervalBytes, '', preallocateBytesOf(config)));
  while (segments.length > 1 && segments[1]!.baseOffset <= logStartOffset) await segments.shift()!.delete();
  logStartOffset = Math.max(logStartOffset, segments[0]!.baseOffset);
  // Every sealed segment recovery did not trust is synced now (after a process crash its data
  // was read back from the page cache, possibly never written: a seal the crash interrupted);
  // then the recovery point moves to the active segment, so that it is there from the first
  // roll on. (In a new directory, or one from before recovery points, it is written here first.)
  const active = segments.at(-1)!;
  if (recoveryPoint !== active.baseOffset) {
    for (const segment of segments.slice(0, -1)) if (unverified.has(segment)) await segment.syncAll();
    await writeRecoveryPoint(fsys, dir, active.baseOffset);
  }
  if (clean) {
    // Gone before any new write: a later crash must not look like a clean shutdown.
    await fsys.unlink(join(dir, cleanShutdownFileName));
    await fsys.fsyncDir(dir);
  }
  return { segments, logStartOffset, recoveryPoint: active.baseOffset };
}

/**
 * Segments must not overlap: each starts at or after the end of the one before. An empty segment
 * that starts below its predecessor's end holds nothing and is what a roll that failed after
 * creating `<base>.log` leaves behind (the old segment then took later appends): it is removed,
 * or as the last segment it would become the active one, hide that data and reuse its offsets.
 * Overlapping segments that both hold data cannot be told apart (which copy of those offsets is
 * right?): the open fails rather than serve or overwrite either.
 */
async function repairOverlaps(fsys: LogFileSystem, dir: string, segments: Segment[], config: LogConfig, clean: boolean, logger: Logger): Promise<void> {
  let activeRemoved = false;
  for (let i = 1; i < segments.length; ) {
    const previous = segments[i - 1]!;
    const segment = segments[i]!;
    if (segment.baseOffset >= previous.nextOffset) {
      i++;
      continue;
    }
    if (!segment.isEmpty) {
      for (const s of segments) await s.retire().catch(() => undefined);
      throw new QuartetError(
        'storage_error',
        `segments overlap in ${dir}: ${segment.paths.log} starts at ${segment.baseOffset}, below ${previous.nextOffset}, the end of ${previous.paths.log}`,
      );
    }
    logger.warn('removing an empty segment that overlaps the previous one (left by a failed roll)', {
      file: segment.paths.log,
      previousEnd: previous.nextOffset,
    });
    activeRemoved ||= i === segments.length - 1;
    segments.splice(i, 1);
    await segment.delete();
  }
  if (activeRemoved && !clean) {
    // The new last segment was opened as a sealed one, trusting its indexes; after an unclean
    // stop the active segment is rescanned from position 0 instead.
    const last = segments.pop()!;
    await last.retire();
    segments.push((await Segment.open(fsys, dir, last.baseOffset, config.indexIntervalBytes, false, logger)).segment);
  }
}

/** Removes compaction and checkpoint temp files, and index files whose log is gone. */
async function removeLeftovers(fsys: LogFileSystem, dir: string, names: string[], logger: Logger): Promise<void> {
  const logs = new Set(names.filter((n) => n.endsWith('.log')).map((n) => n.slice(0, -'.log'.length)));
  for (const name of names) {
    const orphanIndex = /^(\d{20})\.(index|timeindex)$/.exec(name);
    const leftover = name.endsWith(cleanedSuffix) || name.endsWith('.tmp') || (orphanIndex !== null && !logs.has(orphanIndex[1]!));
    if (!leftover) continue;
    logger.warn('removing a leftover file', { file: name });
    await fsys.unlink(join(dir, name));
  }
}
