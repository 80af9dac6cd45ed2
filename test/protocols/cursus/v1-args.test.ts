import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyBody, isTextCommand, lastToken, matchCommand, parseArgs } from '../../../src/protocols/cursus/v1/index.js';
import { atoi, fields, goJson, parseBool, quote, trimSpace, unquote } from '../../../src/protocols/cursus/v1/go-text.js';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');

function args(text: string): Record<string, string> {
  return Object.fromEntries([...parseArgs(b(text))].map(([k, v]) => [k, v.toString('utf8')]));
}

describe('parseArgs (v1 parseKeyValueArgs)', () => {
  it('splits key=value tokens at the first "="', () => {
    assert.deepEqual(args('topic=orders partition=0 metadata=a=b'), { topic: 'orders', partition: '0', metadata: 'a=b' });
  });

  it('takes everything after message=, trimmed, spaces and "=" included', () => {
    assert.deepEqual(args('topic=t producerId=p message=  hello world=1  key=k  '), { topic: 't', producerId: 'p', message: 'hello world=1  key=k' });
    assert.deepEqual(args('message=a=b=c'), { message: 'a=b=c' });
  });

  it('finds message= anywhere, even inside another token, as v1 does', () => {
    assert.deepEqual(args('topic=t xmessage=hi there'), { topic: 't', message: 'hi there' });
  });

  it('has no quoting: quotes are part of the value', () => {
    assert.deepEqual(args('topic="a b" group=g'), { topic: '"a', group: 'g' });
  });

  it('ignores tokens without "=", keeps the last of a repeated key, and keeps keys case-sensitive', () => {
    assert.deepEqual(args('P0:10,P1:20 topic=a topic=b producerId=p ProducerID=q'), { topic: 'b', producerId: 'p', ProducerID: 'q' });
  });

  it('splits on Go whitespace: tabs, newlines and Unicode spaces such as U+00A0 and U+3000', () => {
    assert.deepEqual(args('a=1\tb=2\nc=3\u00a0d=4\u3000e=5'), { a: '1', b: '2', c: '3', d: '4', e: '5' });
  });

  it('keeps a message that is not valid UTF-8 byte for byte', () => {
    const raw = Buffer.concat([b('topic=t message='), Buffer.from([0xff, 0x00, 0xc3, 0x28])]);
    assert.deepEqual(parseArgs(raw).get('message'), Buffer.from([0xff, 0x00, 0xc3, 0x28]));
  });

  it('reads the BATCH_COMMIT offsets from after the last space', () => {
    assert.equal(lastToken(b('BATCH_COMMIT topic=t group=g member=m generation=1 P0:10,P1:20')).toString(), 'P0:10,P1:20');
  });
});

describe('command matching (v1 dispatch)', () => {
  const name = (line: string): string | null => matchCommand(b(line))?.entry.name ?? null;

  it('matches prefixes with their space, case-insensitively, and exact commands whole', () => {
    assert.equal(name('publish topic=t message=x'), 'PUBLISH');
    assert.equal(name('  LIST  '), 'LIST');
    assert.equal(name('help'), 'HELP');
    assert.equal(name('LIST topic=x'), null, 'Java drift: LIST takes no arguments in v1');
    assert.equal(name('STREAM_VERSION topic=t key=k'), 'STREAM_VERSION');
    assert.equal(name('STREAM'), null, 'STREAM needs its arguments');
    assert.equal(name('LIST_OFFSETS'), 'LIST_OFFSETS');
    assert.equal(name('NEGOTIATE'), 'NEGOTIATE');
    assert.equal(name('CONSUME\ttopic=t'), null, 'the prefix ends with a space, not a tab');
    assert.equal(matchCommand(b('RAFT_APPLY x=1'))?.entry.internal, true);
  });

  it('gives the argument text after the name', () => {
    assert.equal(matchCommand(b('CONSUME topic=t partition=0'))?.argText.toString(), 'topic=t partition=0');
  });
});

describe('isTextCommand', () => {
  it('recognises the 45 v1 names and nothing else', () => {
    assert.equal(isTextCommand(b(' \tpublish topic=t')), true);
    assert.equal(isTextCommand(b('SEND_OFFSETS_TO_TXN')), true);
    assert.equal(isTextCommand(b('EXIT')), false);
    assert.equal(isTextCommand(b('TRUNCATE topic=t')), false, 'a Wire v2 command is not a v1 one');
    assert.equal(isTextCommand(b('\x00\x00LIST')), false);
    assert.equal(isTextCommand(b('SEND_OFFSETS_TO_TXNX')), false);
  });
});

describe('classifyBody (v1 processMessage)', () => {
  it('takes raw commands, and commands inside the Go SDK envelope', () => {
    assert.deepEqual(classifyBody(b('LIST')), { kind: 'command', line: b('LIST') });
    const env = Buffer.concat([Buffer.from([0, 5]), b('admin'), b(' CREATE topic=t\n\x00')]);
    assert.deepEqual(classifyBody(env), { kind: 'command', line: b('CREATE topic=t') });
  });

  it('takes a 0xBA7C body as a batch only when its topic length fits', () => {
    assert.equal(classifyBody(Buffer.from('ba7c00017400', 'hex')).kind, 'batch');
    assert.notEqual(classifyBody(Buffer.from('ba7c00107400', 'hex')).kind, 'batch');
    assert.notEqual(classifyBody(Buffer.from('ba7c0000', 'hex')).kind, 'batch');
  });

  it('answers what v1 answers for the rest', () => {
    assert.deepEqual(classifyBody(Buffer.alloc(0)), { kind: 'decode_failed', reason: 'data too short' });
    assert.deepEqual(classifyBody(b('EXIT')), { kind: 'decode_failed', reason: 'invalid topic length' });
    assert.deepEqual(classifyBody(Buffer.concat([Buffer.from([0, 0]), b('EXIT')])), { kind: 'malformed' });
    assert.deepEqual(classifyBody(Buffer.concat([Buffer.from([0, 0]), b('hello')])), { kind: 'malformed' });
    assert.deepEqual(classifyBody(b('INTERNAL_BATCH payload=x')), { kind: 'internal_batch' });
    assert.deepEqual(classifyBody(Buffer.concat([Buffer.from([0, 0]), b('join_groupX')])), { kind: 'command', line: b('join_groupX') });
  });
});

describe('Go text', () => {
  it('quotes as %q does', () => {
    assert.equal(quote('a "b" \\ c'), '"a \\"b\\" \\\\ c"');
    assert.equal(quote('tab\there\n\x00\x7f'), '"tab\\there\\n\\x00\\x7f"');
    assert.equal(quote('é日本\u00a0\u{1f600}'), '"é日本\\u00a0\u{1f600}"');
    assert.equal(quote(Buffer.from([0x61, 0xff, 0x62])), '"a\\xffb"');
    assert.equal(quote('\u{e0001}'), '"\\U000e0001"');
  });

  it('unquotes Go string literals', () => {
    assert.equal(unquote('"a\\"b\\x41\\u00e9\\101"'), 'a"bAéA');
    assert.equal(unquote('"unterminated'), null);
    assert.equal(unquote('"bad \\q"'), null);
  });

  it('reads integers and booleans as strconv does', () => {
    assert.equal(atoi('+42'), 42n);
    assert.equal(atoi('-0'), 0n);
    assert.equal(atoi('9223372036854775808'), null);
    assert.equal(atoi('1_000'), null);
    assert.equal(atoi(' 1'), null);
    assert.equal(parseBool('T'), true);
    assert.equal(parseBool('False'), false);
    assert.equal(parseBool('yes'), null);
  });

  it('trims and splits on Unicode whitespace, byte for byte', () => {
    assert.equal(trimSpace(b('\u2028 a b\u3000')).toString(), 'a b');
    assert.deepEqual(fields(b(' a  b\u205fc ')).map(String), ['a', 'b', 'c']);
    assert.equal(trimSpace(Buffer.from([0xc2])).length, 1, 'a lone lead byte is not a space');
  });

  it('writes JSON as encoding/json does', () => {
    assert.equal(goJson({ a: '<&>\u2028', b: [1, 2] }), '{"a":"\\u003c\\u0026\\u003e\\u2028","b":[1,2]}');
    assert.equal(goJson({ a: { b: [] } }, true), '{\n  "a": {\n    "b": []\n  }\n}');
  });
});
