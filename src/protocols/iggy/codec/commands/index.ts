// The Iggy 0.11 command table: every client command code with its operation byte, whether its
// reply is result-framed, and its request and reply codecs. Codes verified against
// core/binary_protocol/src/codes.rs and dispatch.rs; operations against consensus/operation.rs;
// the catalog and framing rules against specs/iggy-binary-protocol-0.11.md "Commands" and server
// notes §2, §4, §5.
//
// Result-framed replies (metadata operations 128..149, 161, 162 and Register 1) carry
// `00000000 | payload` on success and `01000000 00000000 code` on a committed rejection; the
// per-command reply codecs below see only the payload, `encodeReply`/`decodeReply` add and strip
// the section.

import {
  EvictionReason,
  Operation,
  encodeRequestHeader,
  headerBytes,
  isMetadataOperation,
  requestBodyChecksum,
  type RequestHeader,
  type RequestRejection,
} from '../header.js';
import type { FileSlice } from '../../../../base/batch.js';
import { IggyErrorCode } from '../errors.js';
import { Reader, Writer } from '../primitives.js';
import { type Decoded } from '../values.js';
import {
  readEmpty,
  readGroupRef,
  readOptional,
  readResultSection,
  readStreamRef,
  readTopicRef,
  writeEmpty,
  writeGroupRef,
  writeOptional,
  writeStreamRef,
  writeTopicRef,
  type Empty,
  type StreamRef,
} from './common.js';
import * as cg from './consumer-groups.js';
import * as co from './consumer-offsets.js';
import * as login from './login.js';
import * as msg from './messages.js';
import * as parts from './partitions.js';
import * as seg from './segments.js';
import * as streams from './streams.js';
import * as sys from './system.js';
import * as tokens from './tokens.js';
import * as topics from './topics.js';
import * as users from './users.js';

export const CommandCode = {
  ping: 1,
  getStats: 10,
  getSnapshot: 11,
  getClusterMetadata: 12,
  describeOptions: 13,
  getMe: 20,
  getClient: 21,
  getClients: 22,
  getUser: 31,
  getUsers: 32,
  createUser: 33,
  deleteUser: 34,
  updateUser: 35,
  updatePermissions: 36,
  changePassword: 37,
  loginUser: 38,
  logoutUser: 39,
  loginRegister: 40,
  getPersonalAccessTokens: 41,
  createPersonalAccessToken: 42,
  deletePersonalAccessToken: 43,
  loginWithPersonalAccessToken: 44,
  loginRegisterWithPat: 45,
  pollMessages: 100,
  sendMessages: 101,
  flushUnsavedBuffer: 102,
  getConsumerOffset: 120,
  storeConsumerOffset: 121,
  deleteConsumerOffset: 122,
  getStream: 200,
  getStreams: 201,
  createStream: 202,
  deleteStream: 203,
  updateStream: 204,
  purgeStream: 205,
  getTopic: 300,
  getTopics: 301,
  createTopic: 302,
  deleteTopic: 303,
  updateTopic: 304,
  purgeTopic: 305,
  createPartitions: 402,
  deletePartitions: 403,
  deleteSegments: 503,
  getConsumerGroup: 600,
  getConsumerGroups: 601,
  createConsumerGroup: 602,
  deleteConsumerGroup: 603,
  joinConsumerGroup: 604,
  leaveConsumerGroup: 605,
  syncConsumerGroup: 606,
} as const;
export type CommandCode = (typeof CommandCode)[keyof typeof CommandCode];

export interface CommandSpec<Req, Rep> {
  name: string;
  /** The operation byte the request rides (2 = NonReplicated: code in header bytes 196..200). */
  operation: Operation;
  /** Reply body starts with the result section. */
  resultFramed: boolean;
  readRequest(r: Reader): Req;
  writeRequest(w: Writer, v: Req): void;
  /** The reply payload (after any result section). */
  readReply(r: Reader): Rep;
  writeReply(w: Writer, v: Rep): void;
}

function spec<Req, Rep>(s: CommandSpec<Req, Rep>): CommandSpec<Req, Rep> {
  return s;
}

const NR = Operation.nonReplicated;
const emptyIo = { readRequest: readEmpty, writeRequest: writeEmpty } as const;
const emptyReply = { readReply: readEmpty, writeReply: writeEmpty } as const;
/** Replicated with an `R:` empty reply. */
const rEmpty = (name: string, operation: Operation) => ({ name, operation, resultFramed: true, ...emptyReply });
const optional =
  <T>(read: (r: Reader) => T) =>
  (r: Reader): T | null =>
    readOptional(r, read);
const writeOptionalWith =
  <T>(write: (w: Writer, v: T) => void) =>
  (w: Writer, v: T | null): void =>
    writeOptional(w, v, write);

export const commands = {
  // System
  [CommandCode.ping]: spec<Empty, Empty>({ name: 'ping', operation: NR, resultFramed: false, ...emptyIo, ...emptyReply }),
  [CommandCode.getStats]: spec<Empty, sys.Stats>({
    name: 'stats',
    operation: NR,
    resultFramed: false,
    ...emptyIo,
    readReply: sys.readStats,
    writeReply: sys.writeStats,
  }),
  [CommandCode.getSnapshot]: spec<sys.GetSnapshotRequest, Buffer>({
    name: 'snapshot',
    operation: NR,
    resultFramed: false,
    readRequest: sys.readGetSnapshotRequest,
    writeRequest: sys.writeGetSnapshotRequest,
    readReply: sys.readRawReply,
    writeReply: sys.writeRawReply,
  }),
  [CommandCode.getClusterMetadata]: spec<Empty, sys.ClusterMetadata>({
    name: 'cluster.metadata',
    operation: NR,
    resultFramed: false,
    ...emptyIo,
    readReply: sys.readClusterMetadata,
    writeReply: sys.writeClusterMetadata,
  }),
  [CommandCode.describeOptions]: spec<sys.DescribeOptionsRequest, sys.OptionDescriptor[]>({
    name: 'options.describe',
    operation: NR,
    resultFramed: false,
    readRequest: sys.readDescribeOptionsRequest,
    writeRequest: sys.writeDescribeOptionsRequest,
    readReply: sys.readDescribeOptionsReply,
    writeReply: sys.writeDescribeOptionsReply,
  }),
  [CommandCode.getMe]: spec<Empty, sys.ClientDetails | null>({
    name: 'me',
    operation: NR,
    resultFramed: false,
    ...emptyIo,
    readReply: optional(sys.readClientDetails),
    writeReply: writeOptionalWith(sys.writeClientDetails),
  }),
  [CommandCode.getClient]: spec<sys.GetClientRequest, sys.ClientDetails | null>({
    name: 'client.get',
    operation: NR,
    resultFramed: false,
    readRequest: sys.readGetClientRequest,
    writeRequest: sys.writeGetClientRequest,
    readReply: optional(sys.readClientDetails),
    writeReply: writeOptionalWith(sys.writeClientDetails),
  }),
  [CommandCode.getClients]: spec<Empty, sys.ClientInfo[]>({
    name: 'client.list',
    operation: NR,
    resultFramed: false,
    ...emptyIo,
    readReply: sys.readClientInfoList,
    writeReply: sys.writeClientInfoList,
  }),
  // Users
  [CommandCode.getUser]: spec<users.UserRef, users.UserDetails | null>({
    name: 'user.get',
    operation: NR,
    resultFramed: false,
    readRequest: users.readUserRef,
    writeRequest: users.writeUserRef,
    readReply: optional(users.readUserDetails),
    writeReply: writeOptionalWith(users.writeUserDetails),
  }),
  [CommandCode.getUsers]: spec<Empty, users.UserInfo[]>({
    name: 'user.list',
    operation: NR,
    resultFramed: false,
    ...emptyIo,
    readReply: users.readUserInfoList,
    writeReply: users.writeUserInfoList,
  }),
  [CommandCode.createUser]: spec<users.CreateUserRequest, users.UserDetails>({
    name: 'user.create',
    operation: Operation.createUser,
    resultFramed: true,
    readRequest: users.readCreateUserRequest,
    writeRequest: users.writeCreateUserRequest,
    readReply: users.readUserDetails,
    writeReply: users.writeUserDetails,
  }),
  [CommandCode.deleteUser]: spec<users.UserRef, Empty>({
    ...rEmpty('user.delete', Operation.deleteUser),
    readRequest: users.readUserRef,
    writeRequest: users.writeUserRef,
  }),
  [CommandCode.updateUser]: spec<users.UpdateUserRequest, Empty>({
    ...rEmpty('user.update', Operation.updateUser),
    readRequest: users.readUpdateUserRequest,
    writeRequest: users.writeUpdateUserRequest,
  }),
  [CommandCode.updatePermissions]: spec<users.UpdatePermissionsRequest, Empty>({
    ...rEmpty('user.permissions', Operation.updatePermissions),
    readRequest: users.readUpdatePermissionsRequest,
    writeRequest: users.writeUpdatePermissionsRequest,
  }),
  [CommandCode.changePassword]: spec<users.ChangePasswordRequest, Empty>({
    ...rEmpty('user.password', Operation.changePassword),
    readRequest: users.readChangePasswordRequest,
    writeRequest: users.writeChangePasswordRequest,
  }),
  [CommandCode.loginUser]: spec<login.LegacyLoginUserRequest, { userId: number }>({
    name: 'user.login (legacy)',
    operation: NR,
    resultFramed: false,
    readRequest: login.readLegacyLoginUserRequest,
    writeRequest: login.writeLegacyLoginUserRequest,
    readReply: login.readIdentityReply,
    writeReply: login.writeIdentityReply,
  }),
  [CommandCode.logoutUser]: spec<Empty, Empty>({ name: 'user.logout', operation: Operation.logout, resultFramed: false, ...emptyIo, ...emptyReply }),
  [CommandCode.loginRegister]: spec<login.LoginRegisterRequest, login.LoginRegisterReply>({
    name: 'user.login_register',
    operation: Operation.register,
    resultFramed: true,
    readRequest: login.readLoginRegisterRequest,
    writeRequest: login.writeLoginRegisterRequest,
    readReply: login.readLoginRegisterReply,
    writeReply: login.writeLoginRegisterReply,
  }),
  // Personal access tokens
  [CommandCode.getPersonalAccessTokens]: spec<Empty, tokens.PersonalAccessTokenInfo[]>({
    name: 'personal_access_token.list',
    operation: NR,
    resultFramed: false,
    ...emptyIo,
    readReply: tokens.readPersonalAccessTokens,
    writeReply: tokens.writePersonalAccessTokens,
  }),
  [CommandCode.createPersonalAccessToken]: spec<tokens.CreatePersonalAccessTokenRequest, tokens.CreatePersonalAccessTokenReply>({
    name: 'personal_access_token.create',
    operation: Operation.createPersonalAccessToken,
    resultFramed: true,
    readRequest: tokens.readCreatePersonalAccessTokenRequest,
    writeRequest: tokens.writeCreatePersonalAccessTokenRequest,
    readReply: tokens.readCreatePersonalAccessTokenReply,
    writeReply: tokens.writeCreatePersonalAccessTokenReply,
  }),
  [CommandCode.deletePersonalAccessToken]: spec<tokens.DeletePersonalAccessTokenRequest, Empty>({
    ...rEmpty('personal_access_token.delete', Operation.deletePersonalAccessToken),
    readRequest: tokens.readDeletePersonalAccessTokenRequest,
    writeRequest: tokens.writeDeletePersonalAccessTokenRequest,
  }),
  [CommandCode.loginWithPersonalAccessToken]: spec<login.LegacyLoginWithPatRequest, { userId: number }>({
    name: 'personal_access_token.login (legacy)',
    operation: NR,
    resultFramed: false,
    readRequest: login.readLegacyLoginWithPatRequest,
    writeRequest: login.writeLegacyLoginWithPatRequest,
    readReply: login.readIdentityReply,
    writeReply: login.writeIdentityReply,
  }),
  [CommandCode.loginRegisterWithPat]: spec<login.LoginRegisterWithPatRequest, login.LoginRegisterReply>({
    name: 'user.login_register_with_pat',
    operation: Operation.register,
    resultFramed: true,
    readRequest: login.readLoginRegisterWithPatRequest,
    writeRequest: login.writeLoginRegisterWithPatRequest,
    readReply: login.readLoginRegisterReply,
    writeReply: login.writeLoginRegisterReply,
  }),
  // Messages
  [CommandCode.pollMessages]: spec<msg.PollMessagesRequest, msg.PollMessagesReply>({
    name: 'message.poll',
    operation: NR,
    resultFramed: false,
    readRequest: msg.readPollMessagesRequest,
    writeRequest: msg.writePollMessagesRequest,
    readReply: msg.readPollMessagesReply,
    writeReply: msg.writePollMessagesReply,
  }),
  [CommandCode.sendMessages]: spec<msg.SendMessagesRequest, msg.SendMessagesReply>({
    name: 'message.send',
    operation: Operation.sendMessages,
    resultFramed: false,
    readRequest: msg.readSendMessagesRequest,
    writeRequest: msg.writeSendMessagesRequest,
    readReply: msg.readSendMessagesReply,
    writeReply: msg.writeSendMessagesReply,
  }),
  [CommandCode.flushUnsavedBuffer]: spec<msg.FlushUnsavedBufferRequest, Empty>({
    name: 'message.flush_unsaved_buffer',
    operation: NR,
    resultFramed: false,
    readRequest: msg.readFlushUnsavedBufferRequest,
    writeRequest: msg.writeFlushUnsavedBufferRequest,
    ...emptyReply,
  }),
  // Consumer offsets
  [CommandCode.getConsumerOffset]: spec<co.GetConsumerOffsetRequest, co.ConsumerOffsetInfo | null>({
    name: 'consumer_offset.get',
    operation: NR,
    resultFramed: false,
    readRequest: co.readGetConsumerOffsetRequest,
    writeRequest: co.writeGetConsumerOffsetRequest,
    readReply: optional(co.readConsumerOffsetInfo),
    writeReply: writeOptionalWith(co.writeConsumerOffsetInfo),
  }),
  [CommandCode.storeConsumerOffset]: spec<co.StoreConsumerOffsetRequest, Empty>({
    ...rEmpty('consumer_offset.store', Operation.storeConsumerOffset),
    readRequest: co.readStoreConsumerOffsetRequest,
    writeRequest: co.writeStoreConsumerOffsetRequest,
  }),
  [CommandCode.deleteConsumerOffset]: spec<co.DeleteConsumerOffsetRequest, Empty>({
    ...rEmpty('consumer_offset.delete', Operation.deleteConsumerOffset),
    readRequest: co.readDeleteConsumerOffsetRequest,
    writeRequest: co.writeDeleteConsumerOffsetRequest,
  }),
  // Streams
  [CommandCode.getStream]: spec<StreamRef, streams.StreamDetails | null>({
    name: 'stream.get',
    operation: NR,
    resultFramed: false,
    readRequest: readStreamRef,
    writeRequest: writeStreamRef,
    readReply: optional(streams.readStreamDetails),
    writeReply: writeOptionalWith(streams.writeStreamDetails),
  }),
  [CommandCode.getStreams]: spec<Empty, streams.StreamInfo[]>({
    name: 'stream.list',
    operation: NR,
    resultFramed: false,
    ...emptyIo,
    readReply: streams.readStreamList,
    writeReply: streams.writeStreamList,
  }),
  [CommandCode.createStream]: spec<streams.CreateStreamRequest, streams.StreamInfo>({
    name: 'stream.create',
    operation: Operation.createStream,
    resultFramed: true,
    readRequest: streams.readCreateStreamRequest,
    writeRequest: streams.writeCreateStreamRequest,
    readReply: streams.readStreamInfo,
    writeReply: streams.writeStreamInfo,
  }),
  [CommandCode.deleteStream]: spec({ ...rEmpty('stream.delete', Operation.deleteStream), readRequest: readStreamRef, writeRequest: writeStreamRef }),
  [CommandCode.updateStream]: spec<streams.UpdateStreamRequest, Empty>({
    ...rEmpty('stream.update', Operation.updateStream),
    readRequest: streams.readUpdateStreamRequest,
    writeRequest: streams.writeUpdateStreamRequest,
  }),
  [CommandCode.purgeStream]: spec({ ...rEmpty('stream.purge', Operation.purgeStream), readRequest: readStreamRef, writeRequest: writeStreamRef }),
  // Topics
  [CommandCode.getTopic]: spec({
    name: 'topic.get',
    operation: NR,
    resultFramed: false,
    readRequest: readTopicRef,
    writeRequest: writeTopicRef,
    readReply: optional(topics.readTopicDetails),
    writeReply: writeOptionalWith(topics.writeTopicDetails),
  }),
  [CommandCode.getTopics]: spec({
    name: 'topic.list',
    operation: NR,
    resultFramed: false,
    readRequest: readStreamRef,
    writeRequest: writeStreamRef,
    readReply: topics.readTopicList,
    writeReply: topics.writeTopicList,
  }),
  [CommandCode.createTopic]: spec<topics.CreateTopicRequest, topics.TopicDetails>({
    name: 'topic.create',
    operation: Operation.createTopic,
    resultFramed: true,
    readRequest: topics.readCreateTopicRequest,
    writeRequest: topics.writeCreateTopicRequest,
    readReply: topics.readTopicDetails,
    writeReply: topics.writeTopicDetails,
  }),
  [CommandCode.deleteTopic]: spec({ ...rEmpty('topic.delete', Operation.deleteTopic), readRequest: readTopicRef, writeRequest: writeTopicRef }),
  [CommandCode.updateTopic]: spec<topics.UpdateTopicRequest, Empty>({
    ...rEmpty('topic.update', Operation.updateTopic),
    readRequest: topics.readUpdateTopicRequest,
    writeRequest: topics.writeUpdateTopicRequest,
  }),
  [CommandCode.purgeTopic]: spec({ ...rEmpty('topic.purge', Operation.purgeTopic), readRequest: readTopicRef, writeRequest: writeTopicRef }),
  // Partitions, segments
  [CommandCode.createPartitions]: spec<parts.PartitionsRequest, Empty>({
    ...rEmpty('partition.create', Operation.createPartitions),
    readRequest: parts.readPartitionsRequest,
    writeRequest: parts.writePartitionsRequest,
  }),
  [CommandCode.deletePartitions]: spec<parts.PartitionsRequest, Empty>({
    ...rEmpty('partition.delete', Operation.deletePartitions),
    readRequest: parts.readPartitionsRequest,
    writeRequest: parts.writePartitionsRequest,
  }),
  [CommandCode.deleteSegments]: spec<seg.DeleteSegmentsRequest, Empty>({
    // Not result-framed (isMetadataOperation): an empty body, errors as a status.
    name: 'segment.delete',
    operation: Operation.deleteSegments,
    resultFramed: false,
    ...emptyReply,
    readRequest: seg.readDeleteSegmentsRequest,
    writeRequest: seg.writeDeleteSegmentsRequest,
  }),
  // Consumer groups
  [CommandCode.getConsumerGroup]: spec({
    name: 'consumer_group.get',
    operation: NR,
    resultFramed: false,
    readRequest: readGroupRef,
    writeRequest: writeGroupRef,
    readReply: optional(cg.readConsumerGroupDetails),
    writeReply: writeOptionalWith(cg.writeConsumerGroupDetails),
  }),
  [CommandCode.getConsumerGroups]: spec({
    name: 'consumer_group.list',
    operation: NR,
    resultFramed: false,
    readRequest: readTopicRef,
    writeRequest: writeTopicRef,
    readReply: cg.readConsumerGroupList,
    writeReply: cg.writeConsumerGroupList,
  }),
  [CommandCode.createConsumerGroup]: spec<cg.CreateConsumerGroupRequest, cg.ConsumerGroupInfo>({
    name: 'consumer_group.create',
    operation: Operation.createConsumerGroup,
    resultFramed: true,
    readRequest: cg.readCreateConsumerGroupRequest,
    writeRequest: cg.writeCreateConsumerGroupRequest,
    readReply: cg.readConsumerGroupInfo,
    writeReply: cg.writeConsumerGroupInfo,
  }),
  [CommandCode.deleteConsumerGroup]: spec({ ...rEmpty('consumer_group.delete', Operation.deleteConsumerGroup), readRequest: readGroupRef, writeRequest: writeGroupRef }),
  [CommandCode.joinConsumerGroup]: spec({ ...rEmpty('consumer_group.join', Operation.joinConsumerGroup), readRequest: readGroupRef, writeRequest: writeGroupRef }),
  [CommandCode.leaveConsumerGroup]: spec({ ...rEmpty('consumer_group.leave', Operation.leaveConsumerGroup), readRequest: readGroupRef, writeRequest: writeGroupRef }),
  [CommandCode.syncConsumerGroup]: spec({
    name: 'consumer_group.sync',
    operation: NR,
    resultFramed: false,
    readRequest: readGroupRef,
    writeRequest: writeGroupRef,
    readReply: optional(cg.readConsumerGroupAssignment),
    writeReply: writeOptionalWith(cg.writeConsumerGroupAssignment),
  }),
} as const;

export type Commands = typeof commands;
export type RequestOf<C extends CommandCode> = Commands[C] extends CommandSpec<infer Q, infer _R> ? Q : never;
export type ReplyOf<C extends CommandCode> = Commands[C] extends CommandSpec<infer _Q, infer R> ? R : never;
/** A decoded request tagged with its code (a discriminated union over every command). */
export type DecodedRequest = { [C in CommandCode]: { code: C; request: RequestOf<C> } }[CommandCode];

const byCode = new Map<number, CommandSpec<unknown, unknown>>(
  Object.entries(commands).map(([code, s]) => [Number(code), s as unknown as CommandSpec<unknown, unknown>]),
);
const byOperation = new Map<number, CommandCode>();
for (const [code, s] of byCode) {
  if (s.operation !== Operation.nonReplicated && s.operation !== Operation.register) byOperation.set(s.operation, code as CommandCode);
}

export function isCommandCode(code: number): code is CommandCode {
  return byCode.has(code);
}

export function commandSpec(code: CommandCode): CommandSpec<unknown, unknown> {
  return byCode.get(code)!;
}

export function commandName(code: number): string | undefined {
  return byCode.get(code)?.name;
}

/** The command a replicated operation carries (Register excluded: 40 or 45 by body shape). */
export function commandForOperation(op: number): CommandCode | undefined {
  return byOperation.get(op);
}

/**
 * Resolves the command of a validated request header, as the reference server dispatches:
 * NonReplicated reads the code at 196..200; Register is LoginRegister (40) or
 * LoginRegisterWithPat (45), told apart by the body (login.decodeLoginRegisterBody); Logout is
 * 39; every other operation names its command. Legacy logins 38/44 are evicted with reason 15;
 * an unknown code is status 3 (InvalidCommand), and so is Logout (39) sent as NonReplicated; a
 * replicated command sent as NonReplicated is status 5 (FeatureUnavailable); an unknown operation
 * is Eviction 4.
 */
export function resolveCommand(h: RequestHeader): { code: CommandCode } | RequestRejection {
  if (h.operation === Operation.nonReplicated) {
    const code = h.commandCode;
    if (code === CommandCode.loginUser || code === CommandCode.loginWithPersonalAccessToken) {
      return { action: 'evict', reason: `legacy login command ${code}`, eviction: EvictionReason.malformedLogin };
    }
    const s = byCode.get(code);
    if (s === undefined) return { action: 'status', reason: `unknown command code ${code}`, status: IggyErrorCode.invalidCommand };
    if (s.operation === Operation.register) {
      return { action: 'evict', reason: `login command ${code} must ride operation Register`, eviction: EvictionReason.malformedLogin };
    }
    if (s.operation === Operation.logout) {
      // A session operation, not a replicated command (the reference's lookup_command): unknown as a read.
      return { action: 'status', reason: `command ${code} must ride operation Logout`, status: IggyErrorCode.invalidCommand };
    }
    if (s.operation !== Operation.nonReplicated) {
      // A replicated command: the reference server's non-replicated path keeps FeatureUnavailable for it.
      return { action: 'status', reason: `command ${code} must ride operation ${s.operation}`, status: IggyErrorCode.featureUnavailable };
    }
    return { code: code as CommandCode };
  }
  if (h.operation === Operation.register) return { code: CommandCode.loginRegister };
  const code = byOperation.get(h.operation);
  if (code === undefined) {
    return { action: 'evict', reason: `unknown operation ${h.operation}`, eviction: EvictionReason.invalidRequestOperation };
  }
  return { code };
}

/**
 * Decodes a request body for `code`. Bytes after a whole request are ignored, as the reference
 * server decodes request bodies (its codec's `decode_from`; the C# SDK's DeletePersonalAccessToken
 * sends four more): SendMessages and the requests ending in an options block read to the end of
 * the body, so nothing is left over there, and their own length checks still apply.
 */
export function decodeRequest(code: number, body: Buffer): Decoded<DecodedRequest> {
  const s = byCode.get(code);
  if (s === undefined) return { ok: false, reason: `unknown command code ${code}` };
  const r = new Reader(body);
  const request = s.readRequest(r);
  if (!r.ok) return { ok: false, reason: `${s.name}: ${r.error}`, ...(r.errorCode !== null ? { code: r.errorCode } : {}) };
  return { ok: true, value: { code, request } as DecodedRequest };
}

/** Encodes a request body as a chunk list. */
export function encodeRequest<C extends CommandCode>(code: C, request: RequestOf<C>): Buffer[] {
  const w = new Writer();
  commandSpec(code).writeRequest(w, request);
  return w.chunks();
}

export interface RequestFrameOptions {
  client: bigint;
  request: bigint;
  session: bigint;
  timestamp?: bigint;
  /** Stamp request_checksum (metadata operations only, like the Rust SDK). Default true. */
  stampChecksum?: boolean;
}

/** A whole request frame (SDK side): [header, ...body]. */
export function encodeRequestFrame<C extends CommandCode>(code: C, request: RequestOf<C>, o: RequestFrameOptions): Buffer[] {
  const s = commandSpec(code);
  const body = encodeRequest(code, request);
  let bodyBytes = 0;
  for (const c of body) bodyBytes += c.length;
  const stamp = (o.stampChecksum ?? true) && isMetadataOperation(s.operation);
  const header = encodeRequestHeader({
    size: headerBytes + bodyBytes,
    client: o.client,
    request: o.request,
    operation: s.operation,
    session: o.session,
    commandCode: code,
    requestChecksum: stamp ? requestBodyChecksum(Buffer.concat(body, bodyBytes)) : 0n,
    timestamp: o.timestamp ?? 0n,
  });
  return [header, ...body];
}

/** Encodes a successful reply body (with the 00000000 section when result-framed). */
export function encodeReply<C extends CommandCode>(code: C, reply: ReplyOf<C>): Buffer[] {
  return replyWriter(code, reply).chunks();
}

/** encodeReply for the broker's socket: a poll reply's batches may be file slices (file-replies.ts). */
export function encodeReplyChunks<C extends CommandCode>(code: C, reply: ReplyOf<C>): Array<Buffer | FileSlice> {
  return replyWriter(code, reply).replyChunks();
}

function replyWriter<C extends CommandCode>(code: C, reply: ReplyOf<C>): Writer {
  const s = commandSpec(code);
  const w = new Writer();
  if (s.resultFramed) w.u32(0);
  s.writeReply(w, reply);
  return w;
}

export type ReplyOutcome<T> = { rejected: false; value: T } | { rejected: true; code: number };

/** Decodes a status-0 reply body for `code`: the payload, or the committed rejection code. */
export function decodeReply<C extends CommandCode>(code: C, body: Buffer): Decoded<ReplyOutcome<ReplyOf<C>>> {
  const s = commandSpec(code);
  const r = new Reader(body);
  if (s.resultFramed) {
    const rejected = readResultSection(r);
    if (rejected !== null) {
      const problem = r.done();
      return problem === null ? { ok: true, value: { rejected: true, code: rejected } } : { ok: false, reason: problem };
    }
  }
  const value = s.readReply(r) as ReplyOf<C>;
  const problem = r.done();
  return problem === null ? { ok: true, value: { rejected: false, value } } : { ok: false, reason: `${s.name} reply: ${problem}` };
}

export { encodeResultError, splitResultFramed } from './common.js';
