// Streams (200–205): a stream is a catalog namespace; stream `default` is the namespace every
// Kafka topic lives in. Replies per server notes §7 "Streams".

import { CommandCode, IggyErrorCode } from '../codec/index.js';
import { IggyFailure } from '../errors.js';
import { findStream, requireStream } from '../mapping.js';
import { requireCreateStream, requireStreamList, requireStreamPermission } from '../permissions.js';
import type { IggyHandlerTable } from './types.js';
import { streamInfo, topicInfo } from './views.js';

export const streamHandlers: IggyHandlerTable = {
  [CommandCode.getStream]: (ctx, req) => {
    const ns = findStream(ctx.frontend.broker.catalog, req.streamId);
    if (ns === null) return null;
    requireStreamPermission(ctx.user, ns.id, 'readStream');
    const topics = ctx.frontend.broker.catalog.listTopics(ns.id).map((t) => topicInfo(ctx.frontend, t));
    return { ...streamInfo(ctx.frontend, ns), topics };
  },

  [CommandCode.getStreams]: (ctx) => {
    requireStreamList(ctx.user);
    return ctx.frontend.broker.catalog.listNamespaces().map((ns) => streamInfo(ctx.frontend, ns));
  },

  [CommandCode.createStream]: async (ctx, req) => {
    requireCreateStream(ctx.user);
    // The stream option catalog is empty (server notes §7): any key is unknown.
    if (req.options.length > 0) throw new IggyFailure(IggyErrorCode.unsupportedOptionKey, 'result', `unknown stream option '${req.options[0]!.key}'`);
    const ns = await ctx.frontend.broker.createNamespace(req.name).catch(rethrowName);
    return streamInfo(ctx.frontend, ns);
  },

  [CommandCode.updateStream]: async (ctx, req) => {
    const ns = requireStream(ctx.frontend.broker.catalog, req.streamId, 'result');
    requireStreamPermission(ctx.user, ns.id, 'manageStream');
    if (req.options.length > 0) throw new IggyFailure(IggyErrorCode.unsupportedOptionKey, 'result', `unknown stream option '${req.options[0]!.key}'`);
    if (req.name !== ns.name) await ctx.frontend.broker.catalog.renameNamespace(ns.id, req.name).catch(rethrowName);
    return {};
  },

  [CommandCode.deleteStream]: async (ctx, req) => {
    const ns = requireStream(ctx.frontend.broker.catalog, req.streamId, 'result');
    requireStreamPermission(ctx.user, ns.id, 'manageStream');
    // The front-end drops its state and the grants for it when told of the deletion (frontend.ts).
    await ctx.frontend.broker.deleteNamespace(ns.id);
    return {};
  },

  [CommandCode.purgeStream]: async (ctx, req) => {
    const ns = requireStream(ctx.frontend.broker.catalog, req.streamId, 'result');
    requireStreamPermission(ctx.user, ns.id, 'manageStream');
    for (const t of ctx.frontend.broker.catalog.listTopics(ns.id)) {
      await ctx.frontend.broker.purgeTopic(t);
      ctx.frontend.groups.topicPurged(t.internalId);
    }
    return {};
  },
};

/** invalid_name of a stream is InvalidStreamName (1013); the default namespace is immutable. */
function rethrowName(err: unknown): never {
  const code = (err as { code?: string }).code;
  if (code === 'invalid_name') throw new IggyFailure(IggyErrorCode.invalidStreamName, 'result');
  if (code === 'invalid_request') throw new IggyFailure(IggyErrorCode.invalidStreamName, 'result', (err as Error).message);
  throw err;
}
