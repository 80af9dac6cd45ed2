// CPU and disk figures for GetStats, as the reference server reports them through sysinfo:
// cpu_usage = this process's CPU in percent of one core, total_cpu_usage = the whole machine's CPU
// in percent of all cores, both averaged over a window that starts at the process start and moves
// forward once it is at least a second long (calls in quick succession share a window instead of
// measuring a few microseconds each);
// read_bytes / written_bytes = bytes this process caused to be read from / sent to storage
// (Linux /proc/self/io read_bytes and write_bytes; elsewhere the block counts of getrusage x 512).

import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

export interface ProcessUsage {
  cpuUsage: number;
  totalCpuUsage: number;
  readBytes: bigint;
  writtenBytes: bigint;
}

interface Sample {
  wallMs: number;
  processCpuMicros: number;
  machineBusyMs: number;
  machineTotalMs: number;
}

function machineTimes(): { busyMs: number; totalMs: number } {
  let busy = 0;
  let total = 0;
  for (const c of cpus()) {
    const t = c.times;
    const all = t.user + t.nice + t.sys + t.idle + t.irq;
    total += all;
    busy += all - t.idle;
  }
  return { busyMs: busy, totalMs: total };
}

function sample(wallMs: number): Sample {
  const cpu = process.cpuUsage();
  const machine = machineTimes();
  return { wallMs, processCpuMicros: cpu.user + cpu.system, machineBusyMs: machine.busyMs, machineTotalMs: machine.totalMs };
}

/** Parses /proc/<pid>/io; null when a field is missing. */
export function parseProcIo(text: string): { readBytes: bigint; writtenBytes: bigint } | null {
  const field = (name: string): bigint | null => {
    const m = new RegExp(`^${name}:\\s*(\\d+)$`, 'm').exec(text);
    return m ? BigInt(m[1]!) : null;
  };
  const readBytes = field('read_bytes');
  const writtenBytes = field('write_bytes');
  return readBytes === null || writtenBytes === null ? null : { readBytes, writtenBytes };
}

function diskBytes(): { readBytes: bigint; writtenBytes: bigint } {
  try {
    const parsed = parseProcIo(readFileSync('/proc/self/io', 'utf8'));
    if (parsed !== null) return parsed;
  } catch {
    // not Linux, or /proc is not mounted
  }
  const usage = process.resourceUsage();
  return { readBytes: BigInt(usage.fsRead) * 512n, writtenBytes: BigInt(usage.fsWrite) * 512n };
}

/** The averaging window moves forward only once it is at least this long. */
const windowMsMin = 1_000;

/** Keeps the window's starting sample (see the top of this file). */
export class ProcessUsageMeter {
  private last: Sample;

  constructor(private readonly nowMs: () => number = () => Date.now()) {
    const start = sample(nowMs());
    // The first call averages since process start for this process, and since now for the machine.
    this.last = { ...start, processCpuMicros: 0, wallMs: start.wallMs - process.uptime() * 1000 };
  }

  read(): ProcessUsage {
    const now = sample(this.nowMs());
    const wallMs = Math.max(1, now.wallMs - this.last.wallMs);
    const cpuUsage = ((now.processCpuMicros - this.last.processCpuMicros) / 1000 / wallMs) * 100;
    const machineTotal = now.machineTotalMs - this.last.machineTotalMs;
    const totalCpuUsage = machineTotal > 0 ? ((now.machineBusyMs - this.last.machineBusyMs) / machineTotal) * 100 : 0;
    if (wallMs >= windowMsMin) this.last = now;
    return { cpuUsage: Math.max(0, cpuUsage), totalCpuUsage: Math.min(100, Math.max(0, totalCpuUsage)), ...diskBytes() };
  }
}
