// The consumer group and offset commands (docs/protocols/cursus-wire-v2.md §5; spec "Consumer
// Group Coordination", "Offset Management", "6. Consumer Group Protocol"): REGISTER_GROUP,
// JOIN_GROUP, SYNC_GROUP, LEAVE_GROUP, HEARTBEAT, GROUP_STATUS, LIST_GROUPS, COMMIT_OFFSET,
// BATCH_COMMIT and FETCH_OFFSET. They read the request's fields and answer; the groups and their
// rules are ../groups.ts.

import { optionalInt, optionalText, requiredInt, requiredText } from '../args.js';
import type { Fields } from '../codec/lines.js';
import { assignmentField, checkGroupName, type CursusGroups } from '../groups.js';
import { parseOffsetList } from '../groups-offsets.js';
import { selectorPatternBytesMax, selectorTopicsMax, type GroupSelector } from '../groups-selector.js';
import { CursusFailure, type CursusCommandHandler, type CursusContext, type CursusReply, type CursusRequest } from '../handler.js';

const partitionMax = Number.MAX_SAFE_INTEGER;

function text(fields: Fields): CursusReply {
  return { kind: 'text', fields };
}

function groups(ctx: CursusContext): CursusGroups {
  return ctx.services.groups;
}

/** The `group` field: required, and a name the store can key. */
function groupField(req: CursusRequest): string {
  const name = requiredText(req, 'group');
  checkGroupName(name, req.command);
  return name;
}

/** `generation`, required: `missing_generation command=<COMMAND>` without it (spec error table). */
function generationField(req: CursusRequest): number {
  return requiredInt(req, 'generation', 0);
}

/** Exactly one of `topic`, `topics`, `pattern` (spec: "Exactly one selector is required"). */
function selectorField(req: CursusRequest): GroupSelector {
  const given = (['topic', 'topics', 'pattern'] as const).filter((k) => req.payload?.fields.has(k));
  if (given.length === 0) throw CursusFailure.of('missing_topic', [['command', req.command]], 'one of topic, topics or pattern is required');
  if (given.length > 1) throw CursusFailure.of('invalid_group_selector', [['command', req.command]], `exactly one of topic, topics or pattern; got ${given.join(', ')}`);
  if (given[0] === 'topic') return { kind: 'topic', topic: requiredText(req, 'topic') };
  if (given[0] === 'pattern') {
    const pattern = requiredText(req, 'pattern');
    if (Buffer.byteLength(pattern) > selectorPatternBytesMax) throw CursusFailure.of('invalid_pattern', [['command', req.command]], `a pattern is at most ${selectorPatternBytesMax} bytes`);
    return { kind: 'pattern', pattern };
  }
  // Sorted: the same topics in another order are the same selector.
  const topics = [...new Set(requiredText(req, 'topics').split(',').map((t) => t.trim()).filter((t) => t !== ''))].sort();
  if (topics.length === 0 || topics.length > selectorTopicsMax) throw CursusFailure.of('invalid_topics', [['command', req.command]], `topics names 1 to ${selectorTopicsMax} topics`);
  return { kind: 'topics', topics };
}

const registerGroup: CursusCommandHandler = {
  command: 'REGISTER_GROUP',
  permissions: ['group'],
  async handle(ctx, req) {
    const name = groupField(req);
    const group = await groups(ctx).register(name, selectorField(req));
    return text([['group', group.name], ['topics', group.expansion.topics.map((t) => t.name).join(',')]]);
  },
};

const joinGroup: CursusCommandHandler = {
  command: 'JOIN_GROUP',
  permissions: ['group'],
  async handle(ctx, req) {
    const name = groupField(req);
    const member = requiredText(req, 'member');
    const topic = optionalText(req, 'topic');
    const { group, memberId } = await groups(ctx).join(name, member, topic === '' ? undefined : topic, { alwaysNew: req.dialect === 'v1' });
    return text([['generation', String(group.state.generation)], ['member', memberId], assignmentField(group, groups(ctx).assignmentOf(group, memberId))]);
  },
};

const syncGroup: CursusCommandHandler = {
  command: 'SYNC_GROUP',
  permissions: ['group'],
  handle(ctx, req) {
    const name = groupField(req);
    const member = requiredText(req, 'member');
    const topic = optionalText(req, 'topic');
    const group = groups(ctx).sync(name, member, generationField(req), topic === '' ? undefined : topic);
    return text([assignmentField(group, groups(ctx).assignmentOf(group, member))]);
  },
};

const leaveGroup: CursusCommandHandler = {
  command: 'LEAVE_GROUP',
  permissions: ['group'],
  async handle(ctx, req) {
    const topic = requiredText(req, 'topic');
    const name = groupField(req);
    const member = requiredText(req, 'member');
    await groups(ctx).leave(name, member, topic);
    return text([['group', name], ['member', member], ['left', 'true']]);
  },
};

const heartbeat: CursusCommandHandler = {
  command: 'HEARTBEAT',
  permissions: ['group'],
  handle(ctx, req) {
    const topic = requiredText(req, 'topic');
    const name = groupField(req);
    const member = requiredText(req, 'member');
    const generation = groups(ctx).heartbeat(name, member, optionalInt(req, 'generation', 0), topic);
    return text([['member', member], ['generation', String(generation)]]);
  },
};

const groupStatus: CursusCommandHandler = {
  command: 'GROUP_STATUS',
  permissions: ['group'],
  handle(ctx, req) {
    return { kind: 'json', value: groups(ctx).status(groupField(req)) };
  },
};

const listGroups: CursusCommandHandler = {
  command: 'LIST_GROUPS',
  permissions: ['group'],
  handle(ctx) {
    const names = groups(ctx).list().map((g) => g.name);
    return text([['count', String(names.length)], ['groups', names.join(',')]]);
  },
};

const commitOffset: CursusCommandHandler = {
  command: 'COMMIT_OFFSET',
  permissions: ['group'],
  async handle(ctx, req) {
    const topic = requiredText(req, 'topic');
    const partition = requiredInt(req, 'partition', 0, partitionMax);
    const name = groupField(req);
    const offset = requiredInt(req, 'offset', 0);
    const member = requiredText(req, 'member');
    const generation = generationField(req);
    await groups(ctx).commit(name, member, generation, topic, new Map([[partition, offset]]));
    return text([]);
  },
};

const batchCommit: CursusCommandHandler = {
  command: 'BATCH_COMMIT',
  permissions: ['group'],
  async handle(ctx, req) {
    const topic = requiredText(req, 'topic');
    const name = groupField(req);
    const member = requiredText(req, 'member');
    const generation = generationField(req);
    const offsets = parseOffsetList(optionalText(req, 'offsets'), name, topic);
    const batched = await groups(ctx).commit(name, member, generation, topic, offsets);
    return text([['batched', String(batched)]]);
  },
};

const fetchOffset: CursusCommandHandler = {
  command: 'FETCH_OFFSET',
  permissions: ['group'],
  async handle(ctx, req) {
    const topicName = requiredText(req, 'topic');
    const partition = requiredInt(req, 'partition', 0, partitionMax);
    const name = groupField(req);
    const topic = groups(ctx).requirePartitions(topicName, [partition]);
    // Spec: "If no offset has been committed, the broker returns OK offset=0 (earliest)."
    return text([['offset', String((await groups(ctx).committedOffset(name, topic, partition)) ?? 0)]]);
  },
};

export const groupHandlers: readonly CursusCommandHandler[] = [
  registerGroup,
  joinGroup,
  syncGroup,
  leaveGroup,
  heartbeat,
  groupStatus,
  listGroups,
  commitOffset,
  batchCommit,
  fetchOffset,
];
