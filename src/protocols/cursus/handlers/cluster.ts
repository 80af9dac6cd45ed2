// Cluster and connection commands for one node (spec §4 "Cluster Discovery"): FIND_COORDINATOR,
// LIST_CLUSTER, CLUSTER_STATUS and ELECT_LEADER name this broker (../node.ts) as the only broker,
// leader of every partition and coordinator of every group and transaction; ELECT_LEADER of this
// broker changes nothing (changed=false), of any other is rejected. HELP lists the commands of
// the protocol; EXIT answers OK and the connection closes.

import { commandSpecs } from '../codec/commands.js';
import { optionalText, requiredInt, requiredText } from '../args.js';
import { CursusFailure, type CursusCommandHandler, type CursusContext } from '../handler.js';
import { assertTopicName } from '../topics.js';

/** The commands a client may send, in ID order (not NEGOTIATE, a frame of its own, nor the internal ones). */
export const helpCommands: readonly string[] = commandSpecs.filter((c) => c.internal !== true && c.name !== 'NEGOTIATE').map((c) => c.name);

function brokerEntry(ctx: CursusContext): { id: string; host: string; port: number; active: boolean } {
  const { host, port } = ctx.services.node.address();
  return { id: ctx.services.node.id, host, port, active: true };
}

const findCoordinator: CursusCommandHandler = {
  command: 'FIND_COORDINATOR',
  permissions: [],
  handle(ctx, req) {
    const group = optionalText(req, 'group');
    const transactionalId = optionalText(req, 'transactional_id');
    if (group === undefined && transactionalId === undefined) throw CursusFailure.of('missing_group', [['command', req.command]], 'give group or transactional_id');
    if (group !== undefined && transactionalId !== undefined) throw CursusFailure.of('invalid_coordinator_key', [['command', req.command]], 'give group or transactional_id, not both');
    const { host, port } = ctx.services.node.address();
    return { kind: 'text', fields: [['coordinator_id', ctx.services.node.id], ['host', host], ['port', String(port)]] };
  },
};

const listCluster: CursusCommandHandler = {
  command: 'LIST_CLUSTER',
  permissions: [],
  handle(ctx) {
    return { kind: 'text', fields: [['brokers', JSON.stringify([brokerEntry(ctx)])]] };
  },
};

const clusterStatus: CursusCommandHandler = {
  command: 'CLUSTER_STATUS',
  permissions: [],
  handle(ctx) {
    const { broker, topics, node } = ctx.services;
    const partitions = [];
    for (const name of topics.names()) {
      const topic = topics.coreTopic(name);
      if (topic === null) continue;
      for (let p = 0; p < topic.partitions; p++) {
        const state = broker.replicaState(topic, p);
        partitions.push({
          topic: name,
          partition: p,
          leader: `broker-${state.leaderId}`,
          leader_epoch: state.leaderEpoch,
          hwm: state.highWatermark,
          replicas: state.replicas.map((id) => `broker-${id}`),
          isr: state.inSyncReplicas.map((id) => `broker-${id}`),
        });
      }
    }
    const cluster = {
      mode: 'standalone',
      leader: node.id,
      brokers: [brokerEntry(ctx)],
      active_brokers: 1,
      inactive_brokers: 0,
      partitions,
      leaderless_partitions: 0,
      under_replicated_partitions: 0,
    };
    return { kind: 'text', fields: [['cluster', JSON.stringify(cluster)]] };
  },
};

const electLeader: CursusCommandHandler = {
  command: 'ELECT_LEADER',
  permissions: ['admin'],
  handle(ctx, req) {
    const name = requiredText(req, 'topic');
    const partition = requiredInt(req, 'partition', 0);
    const target = requiredText(req, 'broker');
    assertTopicName(name);
    const d = ctx.services.topics.require(name);
    if (partition >= d.partitions) throw CursusFailure.of('partition_not_found', [['topic', name], ['partition', String(partition)]]);
    const node = ctx.services.node;
    if (target !== node.id) {
      throw CursusFailure.of('leader_election_rejected', [['topic', name], ['partition', String(partition)], ['broker', target], ['reason', 'not_in_sync_replica']], `${target} is not a replica of this partition`);
    }
    const epoch = ctx.services.broker.leadership(ctx.services.topics.coreTopic(name)!, partition).leaderEpoch;
    return {
      kind: 'text',
      fields: [['topic', name], ['partition', String(partition)], ['previous_leader', node.id], ['leader', node.id], ['leader_epoch', String(epoch)], ['changed', 'false']],
    };
  },
};

const help: CursusCommandHandler = {
  command: 'HELP',
  permissions: [],
  handle() {
    return { kind: 'text', fields: [['commands', helpCommands.join(',')]] };
  },
};

const exit: CursusCommandHandler = {
  command: 'EXIT',
  permissions: [],
  handle() {
    return { kind: 'close', fields: [] };
  },
};

export const clusterHandlers: readonly CursusCommandHandler[] = [findCoordinator, listCluster, clusterStatus, electLeader, help, exit];
