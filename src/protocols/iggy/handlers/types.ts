// The contract between the Iggy connection and the handlers: one file per command group in this
// folder, each exporting a partial table of handlers by command code (merged in ./index.ts). A
// handler translates a decoded request into core calls and the result into the reply value the
// codec encodes; it never touches sockets or files.
//
// Failures: throw IggyFailure(code, 'status') for a pre-commit denial (Reply status, empty body:
// 41 unauthorized, 1009/2010/3007 on poll and offsets), IggyFailure(code, 'result') or a
// QuartetError for a committed rejection of a result-framed command (the connection degrades
// both to a status reply for commands that are not result-framed). Returning null from a "get"
// is the empty body the SDKs read as "not found".

import type { User } from '../../../core/users.js';
import type { CommandCode, ReplyOf, RequestHeader, RequestOf } from '../codec/index.js';
import type { IggyFrontend, IggySession } from '../frontend.js';

export interface IggyRequestContext {
  readonly frontend: IggyFrontend;
  readonly session: IggySession;
  /** The logged-in user, as the store has it now. */
  readonly user: User;
  readonly header: RequestHeader;
  /**
   * Runs `fn` once the reply has been written to the socket (or dropped), when nothing references
   * its buffers any more (PollMessages hands its read buffers back then). Absent in tests that call
   * handlers directly.
   */
  readonly afterReplyWritten?: (fn: () => void) => void;
  /**
   * Whether the reply may reference stored batches as file slices, sent with sendfile
   * (src/protocols/file-replies.ts): a plain TCP connection with the native addon loaded.
   */
  readonly fileSlices?: boolean;
}

export type IggyHandler<C extends CommandCode> = (ctx: IggyRequestContext, request: RequestOf<C>) => Promise<ReplyOf<C>> | ReplyOf<C>;

export type IggyHandlerTable = { [C in CommandCode]?: IggyHandler<C> };
