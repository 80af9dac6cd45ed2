// Every Iggy command handler, by command code (one file per command group).

import type { IggyHandlerTable } from './types.js';
import { consumerGroupHandlers } from './consumer-groups.js';
import { consumerOffsetHandlers } from './consumer-offsets.js';
import { messageHandlers } from './messages.js';
import { partitionHandlers } from './partitions.js';
import { streamHandlers } from './streams.js';
import { systemHandlers } from './system.js';
import { topicHandlers } from './topics.js';
import { userHandlers } from './users.js';

export const iggyHandlers: IggyHandlerTable = {
  ...systemHandlers,
  ...streamHandlers,
  ...topicHandlers,
  ...partitionHandlers,
  ...userHandlers,
  ...messageHandlers,
  ...consumerOffsetHandlers,
  ...consumerGroupHandlers,
};
