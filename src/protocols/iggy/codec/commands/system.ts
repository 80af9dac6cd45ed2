// System commands: Ping (1), GetStats (10), GetSnapshot (11), GetClusterMetadata (12),
// DescribeOptions (13), GetMe (20), GetClient (21), GetClients (22). All NonReplicated; replies
// are not result-framed. Layouts: server notes §7, core/binary_protocol/src/responses/system/*.

import { Reader, Writer } from '../primitives.js';
import { checkCount, readLongString, writeLongString } from '../values.js';
import { readUntilEnd, writeAll } from './common.js';

// ---------------------------------------------------------------------------------------------
// GetStats (10). Request: empty. Reply (108-byte numeric prefix; offsets are authoritative):
//   process_id u32 @0 | cpu_usage f32 @4 | total_cpu_usage f32 @8 | memory_usage u64 @12
//   total_memory u64 @20 | available_memory u64 @28 | run_time u64 µs @36 | start_time u64 µs @44
//   read_bytes u64 @52 | written_bytes u64 @60 | messages_size_bytes u64 @68 | streams_count u32 @76
//   topics_count u32 @80 | partitions_count u32 @84 | segments_count u32 @88
//   messages_count u64 @92 | clients_count u32 @100 | consumer_groups_count u32 @104
//   then hostname, os_name, os_version, kernel_version, iggy_server_version: [len u32][utf8] each
//   iggy_server_semver u32 (major·10⁶ + minor·10³ + patch; 0 = absent)
//   cache_metrics_count u32 | {stream u32, topic u32, partition u32, hits u64, misses u64,
//                              hit_ratio f32} × count   (32 bytes each; the server sends 0)
//   threads_count u32 | free_disk_space u64 | total_disk_space u64

export interface CacheMetric {
  streamId: number;
  topicId: number;
  partitionId: number;
  hits: bigint;
  misses: bigint;
  hitRatio: number;
}

export interface Stats {
  processId: number;
  cpuUsage: number;
  totalCpuUsage: number;
  memoryUsage: bigint;
  totalMemory: bigint;
  availableMemory: bigint;
  runTime: bigint;
  startTime: bigint;
  readBytes: bigint;
  writtenBytes: bigint;
  messagesSizeBytes: bigint;
  streamsCount: number;
  topicsCount: number;
  partitionsCount: number;
  segmentsCount: number;
  messagesCount: bigint;
  clientsCount: number;
  consumerGroupsCount: number;
  hostname: string;
  osName: string;
  osVersion: string;
  kernelVersion: string;
  iggyServerVersion: string;
  iggyServerSemver: number;
  cacheMetrics: CacheMetric[];
  threadsCount: number;
  freeDiskSpace: bigint;
  totalDiskSpace: bigint;
}

export function readStats(r: Reader): Stats {
  const s = {
    processId: r.u32('process_id'),
    cpuUsage: r.f32('cpu_usage'),
    totalCpuUsage: r.f32('total_cpu_usage'),
    memoryUsage: r.u64('memory_usage'),
    totalMemory: r.u64('total_memory'),
    availableMemory: r.u64('available_memory'),
    runTime: r.u64('run_time'),
    startTime: r.u64('start_time'),
    readBytes: r.u64('read_bytes'),
    writtenBytes: r.u64('written_bytes'),
    messagesSizeBytes: r.u64('messages_size_bytes'),
    streamsCount: r.u32('streams_count'),
    topicsCount: r.u32('topics_count'),
    partitionsCount: r.u32('partitions_count'),
    segmentsCount: r.u32('segments_count'),
    messagesCount: r.u64('messages_count'),
    clientsCount: r.u32('clients_count'),
    consumerGroupsCount: r.u32('consumer_groups_count'),
    hostname: readLongString(r, 'hostname'),
    osName: readLongString(r, 'os_name'),
    osVersion: readLongString(r, 'os_version'),
    kernelVersion: readLongString(r, 'kernel_version'),
    iggyServerVersion: readLongString(r, 'iggy_server_version'),
    iggyServerSemver: r.u32('iggy_server_semver'),
    cacheMetrics: [] as CacheMetric[],
    threadsCount: 0,
    freeDiskSpace: 0n,
    totalDiskSpace: 0n,
  };
  const count = r.u32('cache_metrics_count');
  if (checkCount(r, count, 32, 'cache metrics')) {
    for (let i = 0; i < count; i++) {
      s.cacheMetrics.push({
        streamId: r.u32('cache stream'),
        topicId: r.u32('cache topic'),
        partitionId: r.u32('cache partition'),
        hits: r.u64('cache hits'),
        misses: r.u64('cache misses'),
        hitRatio: r.f32('cache hit_ratio'),
      });
    }
  }
  s.threadsCount = r.u32('threads_count');
  s.freeDiskSpace = r.u64('free_disk_space');
  s.totalDiskSpace = r.u64('total_disk_space');
  return s;
}

export function writeStats(w: Writer, s: Stats): void {
  w.u32(s.processId).f32(s.cpuUsage).f32(s.totalCpuUsage);
  w.u64(s.memoryUsage).u64(s.totalMemory).u64(s.availableMemory).u64(s.runTime).u64(s.startTime);
  w.u64(s.readBytes).u64(s.writtenBytes).u64(s.messagesSizeBytes);
  w.u32(s.streamsCount).u32(s.topicsCount).u32(s.partitionsCount).u32(s.segmentsCount);
  w.u64(s.messagesCount).u32(s.clientsCount).u32(s.consumerGroupsCount);
  writeLongString(w, s.hostname);
  writeLongString(w, s.osName);
  writeLongString(w, s.osVersion);
  writeLongString(w, s.kernelVersion);
  writeLongString(w, s.iggyServerVersion);
  w.u32(s.iggyServerSemver);
  w.u32(s.cacheMetrics.length);
  for (const c of s.cacheMetrics) w.u32(c.streamId).u32(c.topicId).u32(c.partitionId).u64(c.hits).u64(c.misses).f32(c.hitRatio);
  w.u32(s.threadsCount).u64(s.freeDiskSpace).u64(s.totalDiskSpace);
}

/** SemanticVersion::get_numeric_version. */
export function numericServerVersion(major: number, minor: number, patch: number): number {
  return major * 1_000_000 + minor * 1_000 + patch;
}

// ---------------------------------------------------------------------------------------------
// GetSnapshot (11). Request: [compression u8][types_count u8][snapshot_type u8 × types_count].
// Compression 1 Stored, 2 Deflated, 3 Bzip2, 4 Zstd, 5 Lzma, 6 Xz. Types 1 FilesystemOverview,
// 2 ProcessList, 3 ResourceUsage, 4 Test, 5 ServerLogs, 6 ServerConfig, 100 All.
// Reply: a raw ZIP archive (the whole body).

export interface GetSnapshotRequest {
  compression: number;
  snapshotTypes: number[];
}

export function readGetSnapshotRequest(r: Reader): GetSnapshotRequest {
  const compression = r.u8('compression');
  const count = r.u8('types_count');
  const snapshotTypes: number[] = [];
  if (checkCount(r, count, 1, 'snapshot types')) for (let i = 0; i < count; i++) snapshotTypes.push(r.u8('snapshot_type'));
  if (r.ok && (compression < 1 || compression > 6)) r.fail(`unknown snapshot compression ${compression}`);
  return { compression, snapshotTypes };
}

export function writeGetSnapshotRequest(w: Writer, v: GetSnapshotRequest): void {
  w.u8(v.compression).u8(v.snapshotTypes.length);
  for (const t of v.snapshotTypes) w.u8(t);
}

export function readRawReply(r: Reader): Buffer {
  return r.rest();
}

export function writeRawReply(w: Writer, v: Buffer): void {
  w.bytes(v);
}

// ---------------------------------------------------------------------------------------------
// GetClusterMetadata (12). Request: empty. Reply:
//   [name_len u32][name][nodes_count u32] node × nodes_count
//   node := [name_len u32][name][ip_len u32][ip][tcp u16][quic u16][http u16][websocket u16]
//           [role u8: 0 Leader, 1 Follower]
//           [status u8: 0 Healthy, 1 Starting, 2 Stopping, 3 Unreachable, 4 Maintenance, 5 Unknown]

export interface ClusterNode {
  name: string;
  ip: string;
  tcpPort: number;
  quicPort: number;
  httpPort: number;
  websocketPort: number;
  role: number;
  status: number;
}

export interface ClusterMetadata {
  name: string;
  nodes: ClusterNode[];
}

export function readClusterMetadata(r: Reader): ClusterMetadata {
  const name = readLongString(r, 'cluster name');
  const count = r.u32('nodes_count');
  const nodes: ClusterNode[] = [];
  if (checkCount(r, count, 18, 'nodes')) {
    for (let i = 0; i < count && r.ok; i++) {
      nodes.push({
        name: readLongString(r, 'node name'),
        ip: readLongString(r, 'node ip'),
        tcpPort: r.u16('tcp port'),
        quicPort: r.u16('quic port'),
        httpPort: r.u16('http port'),
        websocketPort: r.u16('websocket port'),
        role: r.u8('role'),
        status: r.u8('status'),
      });
    }
  }
  return { name, nodes };
}

export function writeClusterMetadata(w: Writer, v: ClusterMetadata): void {
  writeLongString(w, v.name);
  w.u32(v.nodes.length);
  for (const n of v.nodes) {
    writeLongString(w, n.name);
    writeLongString(w, n.ip);
    w.u16(n.tcpPort).u16(n.quicPort).u16(n.httpPort).u16(n.websocketPort).u8(n.role).u8(n.status);
  }
}

// ---------------------------------------------------------------------------------------------
// DescribeOptions (13). Request: [scope u8] (1 topic, 2 stream, 3 user; other -> status 3).
// Reply: [count u32] + [key_len u8][key][kind u8][default_len u32][default][desc_len u32][desc].

export const OptionScope = { topic: 1, stream: 2, user: 3 } as const;

export interface DescribeOptionsRequest {
  /** Not range-checked here: the server answers an unknown scope with status 3. */
  scope: number;
}

export function readDescribeOptionsRequest(r: Reader): DescribeOptionsRequest {
  return { scope: r.u8('scope') };
}

export function writeDescribeOptionsRequest(w: Writer, v: DescribeOptionsRequest): void {
  w.u8(v.scope);
}

export interface OptionDescriptor {
  key: string;
  kind: number;
  /** The default value's wire bytes (of `kind`). */
  defaultValue: Buffer;
  description: string;
}

export function readDescribeOptionsReply(r: Reader): OptionDescriptor[] {
  const count = r.u32('options count');
  const out: OptionDescriptor[] = [];
  if (!checkCount(r, count, 10, 'option descriptors')) return out;
  for (let i = 0; i < count && r.ok; i++) {
    const key = r.utf8(r.u8('key length'), 'key');
    const kind = r.u8('kind');
    const defaultValue = r.bytes(r.u32('default length'), 'default');
    const description = readLongString(r, 'description');
    out.push({ key, kind, defaultValue, description });
  }
  return out;
}

export function writeDescribeOptionsReply(w: Writer, v: readonly OptionDescriptor[]): void {
  w.u32(v.length);
  for (const d of v) {
    const key = Buffer.from(d.key, 'utf8');
    w.u8(key.length).bytes(key).u8(d.kind).u32(d.defaultValue.length).bytes(d.defaultValue);
    writeLongString(w, d.description);
  }
}

// ---------------------------------------------------------------------------------------------
// Clients. GetMe (20): empty request. GetClient (21): [client_id u32]. GetClients (22): empty.
//   ClientResponse := [client_id u32][user_id u32][transport u8][address_len u32][address]
//                     [consumer_groups_count u32]
//   GetMe / GetClient reply: ClientResponse + {stream_id u32, topic_id u32, group_id u32} × count,
//                            or an empty body for an unknown client.
//   GetClients reply: ClientResponse* (no count prefix).
// Transport 1 TCP (incl. TLS), 2 QUIC, 4 WebSocket; user_id u32::MAX = no user.

export const Transport = { tcp: 1, quic: 2, websocket: 4 } as const;
export const noUserId = 0xffff_ffff;

export interface ClientInfo {
  clientId: number;
  userId: number;
  transport: number;
  address: string;
  consumerGroupsCount: number;
}

export interface ClientGroup {
  streamId: number;
  topicId: number;
  groupId: number;
}

export interface ClientDetails extends ClientInfo {
  consumerGroups: ClientGroup[];
}

export interface GetClientRequest {
  clientId: number;
}

export function readGetClientRequest(r: Reader): GetClientRequest {
  return { clientId: r.u32('client_id') };
}

export function writeGetClientRequest(w: Writer, v: GetClientRequest): void {
  w.u32(v.clientId);
}

export function readClientInfo(r: Reader): ClientInfo {
  return {
    clientId: r.u32('client_id'),
    userId: r.u32('user_id'),
    transport: r.u8('transport'),
    address: readLongString(r, 'address'),
    consumerGroupsCount: r.u32('consumer_groups_count'),
  };
}

export function writeClientInfo(w: Writer, v: ClientInfo): void {
  w.u32(v.clientId).u32(v.userId).u8(v.transport);
  writeLongString(w, v.address);
  w.u32(v.consumerGroupsCount);
}

export function readClientDetails(r: Reader): ClientDetails {
  const info = readClientInfo(r);
  const consumerGroups: ClientGroup[] = [];
  if (checkCount(r, info.consumerGroupsCount, 12, 'client consumer groups')) {
    for (let i = 0; i < info.consumerGroupsCount; i++) {
      consumerGroups.push({ streamId: r.u32('stream_id'), topicId: r.u32('topic_id'), groupId: r.u32('group_id') });
    }
  }
  return { ...info, consumerGroups };
}

/** Writes consumer_groups_count from the list (the field in `v` is ignored). */
export function writeClientDetails(w: Writer, v: ClientDetails): void {
  writeClientInfo(w, { ...v, consumerGroupsCount: v.consumerGroups.length });
  for (const g of v.consumerGroups) w.u32(g.streamId).u32(g.topicId).u32(g.groupId);
}

export function readClientInfoList(r: Reader): ClientInfo[] {
  return readUntilEnd(r, readClientInfo);
}

export function writeClientInfoList(w: Writer, v: readonly ClientInfo[]): void {
  writeAll(w, v, writeClientInfo);
}
