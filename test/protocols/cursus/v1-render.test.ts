import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cursusError } from '../../../src/protocols/cursus/codec/index.js';
import { helpLine, negotiate, parseArgs, protocolInfoLine, renderFailure, renderJson, renderOkLine, v1Mapping, v2Keys } from '../../../src/protocols/cursus/v1/index.js';

const args = (text: string): Map<string, Buffer> => parseArgs(Buffer.from(text));
const ok = (command: string, fields: Array<[string, string]>, request = ''): string => renderOkLine(v1Mapping(command), fields, args(request));

describe('v1 OK lines from v2 text replies', () => {
  it('keep v1\'s fields in v1\'s order and drop what Wire v2 added', () => {
    const v2Create: Array<[string, string]> = [
      ['topic', 'orders'],
      ['partitions', '3'],
      ['cleanup_policy', 'delete'],
      ['partitioner', 'hash_key'],
      ['auth_policy', 'open'],
      ['read_acl', ''],
      ['write_acl', ''],
      ['retention_hours', '168'],
      ['retention_bytes', '-1'],
      ['revision', '1'],
      ['replication_factor', '1'],
      ['idempotent', 'false'],
      ['event_sourcing', 'false'],
      ['lifecycle_epoch', '1'],
      ['min_in_sync_replicas', '1'],
      ['effective_min_in_sync_replicas', '1'],
    ];
    assert.equal(ok('CREATE', v2Create), 'OK topic=orders partitions=3 cleanup_policy=delete partitioner=hash_key auth_policy=open read_acl= write_acl= retention_hours=168 retention_bytes=-1');
    assert.equal(ok('DELETE', [['topic', 'orders'], ['deleted', 'true'], ['cleanup_pending', 'true']]), 'OK topic=orders deleted=true');
  });

  it('write partition lists as Go\'s %v', () => {
    assert.equal(ok('JOIN_GROUP', [['generation', '2'], ['member', 'c-0001'], ['assignments', '[0,1,2]']]), 'OK generation=2 member=c-0001 assignments=[0 1 2]');
    assert.equal(ok('JOIN_GROUP', [['generation', '2'], ['member', 'c-0001'], ['assignments', '[]']]), 'OK generation=2 member=c-0001 assignments=[]');
  });

  it('fill in from the request what v1 repeats and v2 does not', () => {
    assert.equal(ok('SYNC_GROUP', [['assignments', '[1]']], 'topic=t group=g member=c-1 generation=4'), 'OK generation=4 member=c-1 assignments=[1]');
    assert.equal(ok('REGISTER_GROUP', [['group', 'g'], ['topics', 't']], 'topic=t group=g'), 'OK group=g topic=t registered=true');
    assert.equal(ok('FIND_COORDINATOR', [['coordinator_id', '1'], ['host', 'localhost'], ['port', '9000']], 'group=g'), 'OK coordinator_id=1 coordinator_type=group host=localhost port=9000');
    assert.equal(ok('FIND_COORDINATOR', [['coordinator_id', '1'], ['host', 'localhost'], ['port', '9000']], 'transactional_id=x'), 'OK coordinator_id=1 coordinator_type=transaction host=localhost port=9000');
  });

  it('are a bare OK where v1 has no fields, and the v2 fields as they are for unmapped commands', () => {
    assert.equal(ok('COMMIT_OFFSET', []), 'OK');
    assert.equal(ok('APPEND_STREAM', [['version', '3'], ['offset', '12'], ['partition', '1']]), 'OK version=3 offset=12 partition=1');
    assert.equal(ok('READ_SNAPSHOT', [['snapshot', '{"version":2,"payload":"a b"}']]), 'OK snapshot={"version":2,"payload":"a b"}', 'embedded JSON as %s');
  });
});

describe('v1 JSON replies', () => {
  it('write the AckResponse in v1\'s key order, leader and error only when set', () => {
    const v2 = { status: 'OK', last_offset: 41, producer_id: 'p1', producer_epoch: 3, seq_start: 1, seq_end: 2 };
    assert.equal(renderJson(v1Mapping('PUBLISH'), v2), '{"status":"OK","last_offset":41,"producer_epoch":3,"producer_id":"p1","seq_start":1,"seq_end":2}');
    assert.equal(renderJson(v1Mapping('PUBLISH'), { ...v2, leader: 'h:9000' }), '{"status":"OK","last_offset":41,"producer_epoch":3,"producer_id":"p1","seq_start":1,"seq_end":2,"leader":"h:9000"}');
  });

  it('indent DESCRIBE as json.MarshalIndent does, and escape as encoding/json does', () => {
    assert.equal(renderJson(v1Mapping('DESCRIBE'), { status: 'OK', topic: 'a<b', partitions: [{ id: 0, replicas: null }] }), '{\n  "status": "OK",\n  "topic": "a\\u003cb",\n  "partitions": [\n    {\n      "id": 0,\n      "replicas": null\n    }\n  ]\n}');
    assert.equal(renderJson(v1Mapping('GROUP_STATUS'), { group_name: 'g&h', state: 'Stable' }), '{"group_name":"g\\u0026h","state":"Stable"}');
  });
});

describe('v1 error lines from v2 failures', () => {
  it('use v1\'s codes and shapes', () => {
    assert.equal(renderFailure(cursusError('NOT_LEADER', [['leader', '10.0.0.2:9000']])), 'ERROR: NOT_LEADER LEADER_IS 10.0.0.2:9000');
    assert.equal(renderFailure(cursusError('TOPIC_NOT_FOUND', [['topic', 'x']])), 'ERROR: topic_not_found topic=x');
    assert.equal(renderFailure(cursusError('missing_producerId', [['command', 'PUBLISH']])), 'ERROR: missing_producer_id command=PUBLISH');
    assert.equal(renderFailure(cursusError('unknown_command', [['command', 'FOO']])), 'ERROR: unknown_command command="FOO"');
    assert.equal(renderFailure(cursusError('GEN_MISMATCH', [['current', '3'], ['requested', '2'], ['group', 'g'], ['member', 'c-1']], 'people only')), 'ERROR: GEN_MISMATCH current=3 requested=2 group=g member=c-1');
    assert.equal(renderFailure(cursusError('broker_error', [['reason', 'disk "full"']])), 'ERROR: broker_error reason="disk \\"full\\""');
  });
});

describe('the v1 → v2 request mapping', () => {
  it('passes only the keys the v2 command accepts', () => {
    const keys = v2Keys('CONSUME');
    for (const k of ['topic', 'partition', 'offset', 'member', 'group', 'autoOffsetReset', 'isolation', 'batch', 'wait_ms', 'principal', 'auth_token']) assert.ok(keys.has(k), k);
    assert.equal(keys.has('isolation_level'), false, 'Java\'s isolation_level is ignored, as v1 ignores it');
    assert.equal(keys.has('generation'), false);
  });

  it('maps every v1 command the table lists onto a v2 command that exists', () => {
    for (const name of ['CREATE', 'PUBLISH', 'CONSUME', 'STREAM', 'JOIN_GROUP', 'SYNC_GROUP', 'BATCH_COMMIT', 'FIND_COORDINATOR', 'END_TXN', 'DESCRIBE']) {
      assert.ok(v2Keys(v1Mapping(name).v2).size > 2, name);
    }
  });
});

describe('PROTOCOL_INFO, NEGOTIATE, HELP', () => {
  it('PROTOCOL_INFO answers v1\'s fixed line', () => {
    assert.equal(
      protocolInfoLine,
      'OK protocol=cursus min_version=1 max_version=1 default_version=1 features=event_sourcing_v1,idempotent_producer_v1,offset_resume_v1,stream_control_v1,structured_errors_v1,topic_compaction_v1 error_classes=authorization,availability,conflict,fencing,internal,not_found,routing,validation',
    );
  });

  it('HELP lists the commands in v1\'s HELP order', () => {
    assert.match(helpLine, /^OK commands=CREATE,DELETE,LIST,PUBLISH,CONSUME,STREAM,JOIN_GROUP,/);
    assert.match(helpLine, /,FIND_COORDINATOR,PROTOCOL_INFO,NEGOTIATE,LIST_CLUSTER,CLUSTER_STATUS,ELECT_LEADER,HELP,EXIT$/);
    assert.equal(helpLine.split('=')[1]!.split(',').length, 38);
  });

  it('NEGOTIATE enables what it knows, sorted, and lists the rest', () => {
    const r = negotiate(args('version=1 features=structured_errors_v1,zeta_v9,event_sourcing_v1,alpha'));
    assert.ok(r.ok);
    assert.equal(r.line, 'OK protocol_version=1 enabled=event_sourcing_v1,structured_errors_v1 unsupported=alpha,zeta_v9');
    assert.deepEqual([...r.features].sort(), ['event_sourcing_v1', 'structured_errors_v1']);
    const all = negotiate(args('version=1 features=*'));
    assert.ok(all.ok);
    assert.equal(all.line, 'OK protocol_version=1 enabled=event_sourcing_v1,idempotent_producer_v1,offset_resume_v1,stream_control_v1,structured_errors_v1,topic_compaction_v1 unsupported=');
    const none = negotiate(args('version=1'));
    assert.ok(none.ok);
    assert.equal(none.line, 'OK protocol_version=1 enabled= unsupported=');
  });

  it('NEGOTIATE refuses as v1 does', () => {
    const line = (text: string): string => negotiate(args(text)).line;
    assert.equal(line(''), 'ERROR: missing_protocol_version class=validation retryable=false command=NEGOTIATE');
    assert.equal(line('version=two'), 'ERROR: invalid_protocol_version class=validation retryable=false requested="two"');
    assert.equal(line('version=2'), 'ERROR: UNSUPPORTED_PROTOCOL_VERSION class=validation retryable=false requested=2 min=1 max=1');
    assert.equal(line('version=1 require_features=maybe'), 'ERROR: invalid_require_features class=validation retryable=false value="maybe"');
    assert.equal(line('version=1 features=Bad'), 'ERROR: invalid_protocol_features class=validation retryable=false reason="invalid feature name \\"Bad\\""');
    assert.equal(line('version=1 features=x,y require_features=true'), 'ERROR: UNSUPPORTED_FEATURE class=validation retryable=false features=x,y');
    assert.equal(line(`version=1 features=${Array.from({ length: 65 }, (_, i) => `f${i}`).join(',')}`), 'ERROR: invalid_protocol_features class=validation retryable=false reason="feature request exceeds 64 entries"');
    assert.equal(line(`version=1 features=${'a'.repeat(4097)}`), 'ERROR: invalid_protocol_features class=validation retryable=false reason="feature request exceeds 4096 bytes"');
  });
});
