// The wire round trip every handler harness uses: encode the request, decode its header and body
// as the connection would, run the handler, then encode the response and decode it again (with
// no trailing bytes), so that each call also checks both codecs at that version.

import { decodeRequestHeader } from '../../../../src/protocols/kafka/codec/headers.js';
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse } from '../../../../src/protocols/kafka/codec/frames.js';
import type { RequestInputOf, ResponseOf, SchemaApiKey } from '../../../../src/protocols/kafka/codec/messages/index.js';
import type { KafkaFrontend, KafkaHandler, KafkaRequestContext, KafkaSession } from '../../../../src/protocols/kafka/handlers/types.js';

export interface HandlerCall {
  frontend: KafkaFrontend;
  session: KafkaSession;
  correlationId: number;
  clientId?: string | null;
}

/** The decoded response, or null when the handler sends none (Produce acks=0). */
export async function callHandler<K extends SchemaApiKey>(handler: KafkaHandler<K>, version: number, input: RequestInputOf<K>, on: HandlerCall): Promise<ResponseOf<K> | null> {
  const apiKey = handler.apiKey;
  const clientId = on.clientId === undefined ? 'test-client' : on.clientId;
  const frame = Buffer.concat(encodeRequest(apiKey, version, on.correlationId, clientId, input)).subarray(4);
  const h = decodeRequestHeader(frame);
  if (!h.ok) throw new Error(h.reason);
  const decoded = decodeRequest(apiKey, version, frame, h.bodyOffset);
  if (!decoded.ok) throw new Error(decoded.reason);
  const context: KafkaRequestContext = { frontend: on.frontend, session: on.session, header: h.header, version };
  const answer = await handler.handle(decoded.value, context);
  if (answer === null) return null;
  const out = Buffer.concat(encodeResponse(apiKey, version, h.header.correlationId, answer)).subarray(4);
  const response = decodeResponse(apiKey, version, out);
  if (!response.ok) throw new Error(response.reason);
  if (response.trailingBytes !== 0) throw new Error(`${response.trailingBytes} trailing bytes in the response`);
  return response.body;
}

/** callHandler for a handler that must answer. */
export async function askHandler<K extends SchemaApiKey>(handler: KafkaHandler<K>, version: number, input: RequestInputOf<K>, on: HandlerCall): Promise<ResponseOf<K>> {
  const response = await callHandler(handler, version, input, on);
  if (response === null) throw new Error('handler sent no response');
  return response;
}
