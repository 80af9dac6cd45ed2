// JoinGroup (key 11), v0-7, over the classic group coordinator (../coordinator/group-coordinator.ts).
// The answer may wait for the whole join phase (up to the rebalance timeout): the promise resolves
// when the coordinator completes this member's join.
//
// Version differences handled here (apache/kafka KafkaApis.handleJoinGroupRequest, JoinGroupRequest.json):
// - v0 has no rebalance timeout: the session timeout is used for both, as Kafka does.
// - v4+ (KIP-394): a dynamic member without an id gets MEMBER_ID_REQUIRED and the id to rejoin
//   with; the coordinator decides from `apiVersion`.
// - v5+ carries group.instance.id (static membership, KIP-345); v7+ answers the protocol type and
//   a nullable protocol name. Before v7 the protocol name is a non-null string, so an error answer
//   carries "".
// - clientHost is Kafka's InetAddress.toString() form, "/127.0.0.1".
// Authorization (../access.ts): a SASL user that may not read every topic its own subscription
// names (mayJoinWith; only consumer-protocol groups), or every topic the group involves (mayUseGroup:
// its members' subscriptions, its committed offsets) → GROUP_AUTHORIZATION_FAILED (30), and the
// group is left as it was; checked again when the join completes, since other members may have
// joined meanwhile (the user then leaves the group again).

import { kafkaAccessOf, mayJoinWith, mayUseGroup } from '../access.js';
import { ApiKey } from '../codec/api-keys.js';
import { ErrorCode } from '../codec/errors.js';
import { defineHandler } from './types.js';

/** "/host" from a remote address written "host:port", "[v6]:port" or "host". */
export function clientHostOf(remote: string): string {
  let host = remote;
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    host = end > 0 ? host.slice(1, end) : host.slice(1);
  } else if (host.indexOf(':') === host.lastIndexOf(':')) {
    // One colon at most: IPv4 or a name, with or without a port. More colons: a bare IPv6 address.
    const colon = host.indexOf(':');
    if (colon >= 0) host = host.slice(0, colon);
  }
  // An IPv4 client on a dual-stack socket: Java reports it as the IPv4 address.
  if (host.toLowerCase().startsWith('::ffff:') && host.includes('.')) host = host.slice(7);
  return `/${host}`;
}

export const joinGroupHandler = defineHandler({
  apiKey: ApiKey.JoinGroup,
  minVersion: 0,
  maxVersion: 7,
  async handle(request, { frontend, session, header, version }) {
    const access = kafkaAccessOf(frontend, session);
    const denied = { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, generationId: -1, protocolType: null, protocolName: version >= 7 ? null : '', leader: '', memberId: '', members: [] };
    if (access.restricted) {
      const memberUser = request.memberId === '' ? undefined : frontend.groups.memberUser(request.groupId, request.memberId);
      const ownMember = memberUser !== undefined && memberUser === (session.principalUserId ?? null);
      // Another user's member id is not this connection's to rejoin with.
      if (memberUser !== undefined && !ownMember) return denied;
      if (!(mayJoinWith(access, request.protocolType, request.protocols) && (await mayUseGroup(frontend, access, request.groupId)))) {
        // Its own member, refused on a rejoin, leaves at once rather than hold the rebalance up.
        if (ownMember) frontend.groups.leaveGroup(request.groupId, [{ memberId: request.memberId, groupInstanceId: version >= 5 ? request.groupInstanceId : null }]);
        return denied;
      }
    }
    const result = await frontend.groups.joinGroup({
      groupId: request.groupId,
      memberId: request.memberId,
      groupInstanceId: version >= 5 ? request.groupInstanceId : null,
      protocolType: request.protocolType,
      protocols: request.protocols.map((p) => ({ name: p.name, metadata: p.metadata })),
      sessionTimeoutMs: request.sessionTimeoutMs,
      rebalanceTimeoutMs: version >= 1 ? request.rebalanceTimeoutMs : request.sessionTimeoutMs,
      apiVersion: version,
      clientId: header.clientId ?? '',
      clientHost: clientHostOf(session.remote),
      userId: session.principalUserId ?? null,
    });
    if (access.restricted && result.errorCode === ErrorCode.NONE && !(await mayUseGroup(frontend, access, request.groupId))) {
      // Another member joined meanwhile naming topics this user may not read: the answer would show
      // them (a leader gets every member's subscription). It leaves the group again instead.
      frontend.groups.leaveGroup(request.groupId, [{ memberId: result.memberId, groupInstanceId: version >= 5 ? request.groupInstanceId : null }]);
      return denied;
    }
    return {
      throttleTimeMs: 0,
      errorCode: result.errorCode,
      generationId: result.generationId,
      protocolType: result.protocolType,
      protocolName: version >= 7 ? result.protocolName : (result.protocolName ?? ''),
      leader: result.leaderId,
      memberId: result.memberId,
      members: result.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: m.metadata })),
    };
  },
});
