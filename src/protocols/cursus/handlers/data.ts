// The data path's commands (docs/protocols/cursus-wire-v2.md §10): PUBLISH (publish.ts), CONSUME
// and LIST_OFFSETS (consume.ts), STREAM (stream-push.ts), over CursusServices.data. Permissions
// as spec §8 has them: CONSUME and STREAM need topic.read plus group.

import { consume, listOffsets } from '../consume.js';
import type { CursusCommandHandler } from '../handler.js';
import { publish } from '../publish.js';
import { openStream } from '../stream-push.js';

export const dataHandlers: readonly CursusCommandHandler[] = [
  { command: 'PUBLISH', permissions: ['topic.write'], handle: publish },
  { command: 'CONSUME', permissions: ['topic.read', 'group'], handle: consume },
  { command: 'STREAM', permissions: ['topic.read', 'group'], handle: openStream },
  { command: 'LIST_OFFSETS', permissions: ['topic.read'], handle: listOffsets },
];
