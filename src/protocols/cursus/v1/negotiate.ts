// PROTOCOL_INFO, NEGOTIATE and HELP as Cursus v1 answers them (real Cursus
// pkg/controller/protocol_handler.go, pkg/protocol/capabilities.go, command_help.go). They are
// v1-only: Wire v2 negotiates in its binary first frame and has no PROTOCOL_INFO, so the v1
// session answers them itself.
//
//   PROTOCOL_INFO
//     → OK protocol=cursus min_version=1 max_version=1 default_version=1 features=<csv>
//       error_classes=authorization,availability,conflict,fencing,internal,not_found,routing,validation
//   NEGOTIATE version=<N> [features=<csv|*>] [require_features=<bool>]
//     → OK protocol_version=1 enabled=<sorted csv> unsupported=<sorted csv>
//
// NEGOTIATE is optional, connection-scoped and repeatable; each success replaces the enabled
// features. Only `structured_errors_v1` changes what the broker writes (class= retryable= in
// errors); STREAM_CONTROL is sent regardless. Its errors carry class and retryable already.

import { atoi, parseBool, quote } from './go-text.js';
import { v1HelpOrder } from './mapping.js';

export const v1ProtocolVersion = 1;

/** The features v1 supports, sorted (as JoinFeatures writes them). */
export const v1Features: readonly string[] = ['event_sourcing_v1', 'idempotent_producer_v1', 'offset_resume_v1', 'stream_control_v1', 'structured_errors_v1', 'topic_compaction_v1'];

export const structuredErrorsFeature = 'structured_errors_v1';

/** Limits of a feature request (capabilities.go). */
export const featureRequestBytesMax = 4096;
export const featureRequestNamesMax = 64;
export const featureNameBytesMax = 64;

export const protocolInfoLine = `OK protocol=cursus min_version=${v1ProtocolVersion} max_version=${v1ProtocolVersion} default_version=${v1ProtocolVersion} features=${v1Features.join(',')} error_classes=authorization,availability,conflict,fencing,internal,not_found,routing,validation`;

export const helpLine = `OK commands=${v1HelpOrder.join(',')}`;

export type NegotiateOutcome = { ok: true; line: string; features: ReadonlySet<string> } | { ok: false; line: string };

function goTrim(s: string): string {
  return s.replace(/^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g, '');
}

/** ParseFeatureRequest + NegotiateFeatures: enabled and unsupported names, sorted, or the error text. */
function negotiateFeatures(requested: string): { enabled: string[]; unsupported: string[] } | string {
  const text = goTrim(requested);
  if (text === '') return { enabled: [], unsupported: [] };
  if (Buffer.byteLength(text, 'utf8') > featureRequestBytesMax) return `feature request exceeds ${featureRequestBytesMax} bytes`;
  const parts = text.split(',');
  if (parts.length > featureRequestNamesMax) return `feature request exceeds ${featureRequestNamesMax} entries`;
  if (parts.length === 1 && goTrim(parts[0]!) === '*') return { enabled: [...v1Features], unsupported: [] };
  const names = new Set<string>();
  for (const raw of parts) {
    const name = goTrim(raw);
    if (name === '' || name.length > featureNameBytesMax || !/^[a-z0-9_]+$/.test(name)) return `invalid feature name ${quote(name)}`;
    names.add(name);
  }
  const sorted = [...names].sort();
  return { enabled: sorted.filter((n) => v1Features.includes(n)), unsupported: sorted.filter((n) => !v1Features.includes(n)) };
}

/** handleNegotiate, given the command's arguments as text (version, features, require_features). */
export function negotiate(args: ReadonlyMap<string, Buffer>): NegotiateOutcome {
  const versionText = args.get('version')?.toString('utf8') ?? '';
  if (versionText === '') return { ok: false, line: 'ERROR: missing_protocol_version class=validation retryable=false command=NEGOTIATE' };
  const version = atoi(versionText);
  if (version === null) return { ok: false, line: `ERROR: invalid_protocol_version class=validation retryable=false requested=${quote(versionText)}` };
  if (version !== BigInt(v1ProtocolVersion)) {
    return { ok: false, line: `ERROR: UNSUPPORTED_PROTOCOL_VERSION class=validation retryable=false requested=${version} min=${v1ProtocolVersion} max=${v1ProtocolVersion}` };
  }
  let requireFeatures = false;
  const requireText = args.get('require_features')?.toString('utf8') ?? '';
  if (requireText !== '') {
    const b = parseBool(requireText);
    if (b === null) return { ok: false, line: `ERROR: invalid_require_features class=validation retryable=false value=${quote(requireText)}` };
    requireFeatures = b;
  }
  const features = negotiateFeatures(args.get('features')?.toString('utf8') ?? '');
  if (typeof features === 'string') return { ok: false, line: `ERROR: invalid_protocol_features class=validation retryable=false reason=${quote(features)}` };
  if (requireFeatures && features.unsupported.length > 0) {
    return { ok: false, line: `ERROR: UNSUPPORTED_FEATURE class=validation retryable=false features=${features.unsupported.join(',')}` };
  }
  return {
    ok: true,
    line: `OK protocol_version=${version} enabled=${features.enabled.join(',')} unsupported=${features.unsupported.join(',')}`,
    features: new Set(features.enabled),
  };
}
