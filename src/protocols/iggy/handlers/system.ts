// System commands: Ping (1), GetStats (10), GetSnapshot (11), GetClusterMetadata (12),
// DescribeOptions (13), GetMe (20), GetClient (21), GetClients (22). Layouts: server notes §7.
//
// GetSnapshot answers with a real ZIP (../zip.ts) holding one text entry per requested type
// (100 = all): filesystem_overview.txt (the data directory's partition logs), process_list.txt
// (this process), resource_usage.txt (process.memoryUsage/resourceUsage), test.txt,
// server_logs.txt (the broker's last log lines, kept by its logger: base/logger.ts LogTail),
// server_config.txt (the Iggy front-end
// settings). Compression 1 stores the entries, every other code deflates them (the only
// algorithms Node ships for ZIP).

import { cpus, freemem, hostname, release, totalmem, type as osType, version as osVersion } from 'node:os';
import { statfs } from 'node:fs/promises';
import { CommandCode, IggyErrorCode } from '../codec/index.js';
import { numericServerVersion, type ClientDetails, type ClusterMetadata, type Stats } from '../codec/commands/system.js';
import { IggyFailure } from '../errors.js';
import type { IggyFrontend, IggySession } from '../frontend.js';
import { requireServer } from '../permissions.js';
import { topicOptionDescriptors } from '../topic-options.js';
import { writeZip, type ZipEntry } from '../zip.js';
import type { IggyHandlerTable } from './types.js';
import { micros } from './views.js';

/** ClientResponse transport: 1 TCP (incl. TLS). */
export const transportTcp = 1;
export const noUserId = 0xffff_ffff;
export const snapshotTypeAll = 100;
const snapshotTypeNames: Record<number, string> = {
  1: 'filesystem_overview',
  2: 'process_list',
  3: 'resource_usage',
  4: 'test',
  5: 'server_logs',
  6: 'server_config',
};

function clientDetails(frontend: IggyFrontend, s: IggySession): ClientDetails {
  const groups = frontend.groups.membershipsOf(s.connectionId).map((g) => {
    const topic = frontend.broker.catalog.topicByInternalId(g.topicInternalId);
    return { streamId: topic?.namespaceId ?? 0, topicId: topic?.id ?? 0, groupId: g.id };
  });
  return {
    clientId: s.connectionId,
    userId: s.userId ?? noUserId,
    transport: transportTcp,
    address: s.address,
    consumerGroupsCount: groups.length,
    consumerGroups: groups,
  };
}

function semver(version: string): number {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  return m ? numericServerVersion(Number(m[1]), Number(m[2]), Number(m[3])) : 0;
}

async function stats(frontend: IggyFrontend): Promise<Stats> {
  const catalog = frontend.broker.catalog;
  const topics = catalog.listTopics();
  let partitions = 0;
  let segments = 0;
  let messages = 0n;
  let bytes = 0n;
  for (const t of topics) {
    for (let p = 0; p < t.partitions; p++) {
      const s = frontend.broker.partition(t, p).stats();
      partitions++;
      segments += s.segmentCount;
      messages += BigInt(Math.max(0, s.highWatermark - s.logStartOffset));
      bytes += BigInt(s.sizeBytes);
    }
  }
  let free = 0n;
  let total = 0n;
  try {
    const fs = await statfs(frontend.broker.dataDir);
    free = BigInt(fs.bavail) * BigInt(fs.bsize);
    total = BigInt(fs.blocks) * BigInt(fs.bsize);
  } catch {
    // a memory broker has no directory
  }
  const mem = process.memoryUsage();
  const usage = frontend.processUsage.read();
  const now = frontend.clock.now();
  return {
    processId: process.pid,
    cpuUsage: usage.cpuUsage,
    totalCpuUsage: usage.totalCpuUsage,
    memoryUsage: BigInt(mem.rss),
    totalMemory: BigInt(totalmem()),
    availableMemory: BigInt(freemem()),
    runTime: micros(now - frontend.startedAtMs),
    startTime: micros(frontend.startedAtMs),
    readBytes: usage.readBytes,
    writtenBytes: usage.writtenBytes,
    messagesSizeBytes: bytes,
    streamsCount: catalog.listNamespaces().length,
    topicsCount: topics.length,
    partitionsCount: partitions,
    segmentsCount: segments,
    messagesCount: messages,
    clientsCount: frontend.sessions.size,
    consumerGroupsCount: frontend.groups.count(),
    hostname: hostname(),
    osName: osType(),
    osVersion: osVersion(),
    kernelVersion: release(),
    iggyServerVersion: frontend.serverVersion,
    iggyServerSemver: semver(frontend.serverVersion),
    cacheMetrics: [],
    threadsCount: cpus().length,
    freeDiskSpace: free,
    totalDiskSpace: total,
  };
}

function snapshotEntry(frontend: IggyFrontend, type: number): ZipEntry {
  const name = `${snapshotTypeNames[type]}.txt`;
  switch (type) {
    case 1: {
      const lines = frontend.broker.catalog.listTopics().flatMap((t) =>
        Array.from({ length: t.partitions }, (_, p) => {
          const s = frontend.broker.partition(t, p).stats();
          return `${t.namespace}/${t.name}/${p}\tsegments=${s.segmentCount}\tbytes=${s.sizeBytes}\tstart=${s.logStartOffset}\tend=${s.nextOffset}`;
        }),
      );
      return { name, data: Buffer.from(`data directory: ${frontend.broker.dataDir}\n${lines.join('\n')}\n`) };
    }
    case 2:
      return { name, data: Buffer.from(`pid=${process.pid}\tcommand=${process.argv.join(' ')}\n`) };
    case 3:
      return { name, data: Buffer.from(`${JSON.stringify({ memory: process.memoryUsage(), resources: process.resourceUsage() }, null, 2)}\n`) };
    case 4:
      return { name, data: Buffer.from('test\n') };
    case 5: {
      // The broker's last log lines (JSON, oldest first), kept beside stderr by its logger (LogTail).
      const lines = frontend.logger.recentLines?.() ?? [];
      const text = lines.length > 0 ? `${lines.join('\n')}\n` : 'This broker keeps no log lines in memory (its logger has no tail); its log goes to stderr.\n';
      return { name, data: Buffer.from(text) };
    }
    default:
      return { name, data: Buffer.from(`${JSON.stringify({ iggy: frontend.settings, serverVersion: frontend.serverVersion }, null, 2)}\n`) };
  }
}

export const systemHandlers: IggyHandlerTable = {
  [CommandCode.ping]: () => ({}),

  [CommandCode.getStats]: (ctx) => {
    requireServer(ctx.user, 'readServers');
    return stats(ctx.frontend);
  },

  [CommandCode.getSnapshot]: (ctx, req) => {
    requireServer(ctx.user, 'readServers');
    const types = req.snapshotTypes.includes(snapshotTypeAll) ? [1, 2, 3, 4, 5, 6] : [...new Set(req.snapshotTypes)];
    if (types.length === 0 || types.some((t) => snapshotTypeNames[t] === undefined)) throw new IggyFailure(IggyErrorCode.invalidCommand, 'status');
    return writeZip(
      types.map((t) => snapshotEntry(ctx.frontend, t)),
      { deflate: req.compression !== 1, now: new Date(ctx.frontend.clock.now()) },
    );
  },

  [CommandCode.getClusterMetadata]: (ctx): ClusterMetadata => {
    const a = ctx.frontend.advertised(ctx.session);
    // The names a reference server without a cluster reports (its SDKs' tests expect them).
    return {
      name: 'single-node',
      nodes: [{ name: 'iggy-node', ip: a.host, tcpPort: a.port, quicPort: 0, httpPort: 0, websocketPort: 0, role: 0, status: 0 }],
    };
  },

  [CommandCode.describeOptions]: (_ctx, req) => {
    if (req.scope === 1) return topicOptionDescriptors();
    if (req.scope === 2 || req.scope === 3) return [];
    throw new IggyFailure(IggyErrorCode.invalidCommand, 'status');
  },

  [CommandCode.getMe]: (ctx) => clientDetails(ctx.frontend, ctx.session),

  [CommandCode.getClient]: (ctx, req) => {
    requireServer(ctx.user, 'readServers');
    const s = ctx.frontend.sessions.get(req.clientId);
    return s === undefined ? null : clientDetails(ctx.frontend, s);
  },

  [CommandCode.getClients]: (ctx) => {
    requireServer(ctx.user, 'readServers');
    return [...ctx.frontend.sessions.values()].sort((a, b) => a.connectionId - b.connectionId).map((s) => clientDetails(ctx.frontend, s));
  },
};
