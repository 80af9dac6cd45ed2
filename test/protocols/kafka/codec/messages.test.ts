// Every API, every version: random messages (from the schema tables) round-trip through
// encode/decode, consume every byte, and re-encode to the same bytes; hostile bodies never throw.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { supportedApis } from '../../../../src/protocols/kafka/codec/api-keys.js';
import { messageSchemas, hasSchema } from '../../../../src/protocols/kafka/codec/messages/index.js';
import {
  decodeMessage,
  encodeMessage,
  type Fields,
  type MessageSchema,
  type StructInput,
} from '../../../../src/protocols/kafka/codec/schema.js';
import { structArb } from './arbitraries.js';

function roundTrip(schema: MessageSchema, version: number, value: Record<string, unknown>): void {
  const bytes = encodeMessage(schema, version, value as StructInput<Fields>).toBuffer();
  const decoded = decodeMessage(schema, version, bytes);
  assert.ok(decoded.ok, decoded.ok ? '' : decoded.reason);
  assert.equal(decoded.trailingBytes, 0);
  assert.deepStrictEqual(decoded.value, value);
  const again = encodeMessage(schema, version, decoded.value as StructInput<Fields>).toBuffer();
  assert.deepStrictEqual(again, bytes);
}

describe('message schemas', () => {
  it('cover every advertised API and version range', () => {
    for (const api of supportedApis) {
      assert.ok(hasSchema(api.key), `${api.name} has a schema`);
      const s = messageSchemas[api.key];
      for (const schema of [s.request, s.response] as MessageSchema[]) {
        assert.equal(schema.apiKey, api.key);
        assert.equal(schema.validVersions.min, api.minVersion, schema.name);
        assert.equal(schema.validVersions.max, api.maxVersion, schema.name);
        const flexFrom = Number.isFinite(schema.flexibleVersions.max) ? null : schema.flexibleVersions.min;
        assert.equal(flexFrom, api.flexibleFrom, `${schema.name} flexible versions`);
      }
    }
  });

  for (const api of supportedApis) {
    if (!hasSchema(api.key)) continue;
    const s = messageSchemas[api.key];
    describe(api.name, () => {
      for (let v = api.minVersion; v <= api.maxVersion; v++) {
        it(`v${v} request and response round-trip`, () => {
          for (const schema of [s.request, s.response] as MessageSchema[]) {
            fc.assert(
              fc.property(structArb(schema.fields, v), (value) => roundTrip(schema, v, value)),
              { numRuns: 25 },
            );
            // The all-defaults message round-trips too.
            const empty = decodeMessage(schema, v, encodeMessage(schema, v, {}).toBuffer());
            assert.ok(empty.ok);
          }
        });
      }
      it('never throws on random bytes', () => {
        for (const schema of [s.request, s.response] as MessageSchema[]) {
          fc.assert(
            fc.property(
              fc.integer({ min: api.minVersion, max: api.maxVersion }),
              fc.uint8Array({ maxLength: 48 }),
              (v, bytes) => {
                const r = decodeMessage(schema, v, Buffer.from(bytes));
                assert.ok(typeof r.ok === 'boolean');
              },
            ),
            { numRuns: 60 },
          );
        }
      });
      it('rejects every truncation of a valid message with a reason', () => {
        const schema = s.request as MessageSchema;
        const v = api.maxVersion;
        const sample = fc.sample(structArb(schema.fields, v), { numRuns: 1, seed: 42 })[0]!;
        const bytes = encodeMessage(schema, v, sample as StructInput<Fields>).toBuffer();
        for (let n = 0; n < bytes.length; n++) {
          const r = decodeMessage(schema, v, bytes.subarray(0, n));
          assert.equal(r.ok, false, `a ${n}-byte prefix of ${bytes.length} must not decode`);
        }
      });
    });
  }
});
