// What a Cursus connection does with a decoded request, whichever wire it came in on (Wire v2
// frames, or v1 lines and batches, v1-connection.ts): authenticate it (AUTH's principal/token, or
// inline principal/auth_token on any request; later requests run as that principal), dispatch it
// through the frontend, and turn what a handler throws into the CursusFailure the connection
// answers (a core error mapped by core-errors.ts; anything else is logged and internal_error).

import { createHash } from 'node:crypto';
import type { ConnectionContext } from '../transport.js';
import { optionalText, requiredText } from './args.js';
import { CommandId } from './codec/commands.js';
import { cursusFailureOfCoreError } from './core-errors.js';
import type { CursusFrontend } from './frontend.js';
import { CursusFailure, type CursusReply, type CursusRequest } from './handler.js';

export class CursusRequestRunner {
  /** The authenticated user (null: anonymous) and what proved it (a digest of the token, not the token). */
  private userId: number | null = null;
  private credentials: { principal: string; digest: string } | null = null;

  constructor(
    private readonly frontend: CursusFrontend,
    private readonly context: ConnectionContext,
  ) {}

  /** Authenticates and dispatches one request; throws the CursusFailure to answer (failureOf). */
  async run(request: CursusRequest): Promise<CursusReply> {
    await this.authenticate(request);
    const services = this.frontend.services;
    const ctx = { services, principal: services.access.principalOf(this.userId), peer: this.context.remote };
    return this.frontend.dispatch(ctx, CommandId[request.command] ?? 0, request);
  }

  /** run(), with anything thrown turned into a CursusFailure (for callers that answer failures). */
  async runOrFail(request: CursusRequest): Promise<CursusReply> {
    try {
      return await this.run(request);
    } catch (error) {
      throw this.failureOf(error, request.command);
    }
  }

  /**
   * AUTH's principal/token, or a request's inline principal/auth_token: checked (unless they are
   * the ones this connection already proved) and made the connection's principal.
   */
  private async authenticate(req: CursusRequest): Promise<void> {
    let principal: string | undefined;
    let token: string | undefined;
    if (req.command === 'AUTH') {
      principal = requiredText(req, 'principal');
      token = requiredText(req, 'token');
    } else {
      principal = optionalText(req, 'principal');
      token = optionalText(req, 'auth_token');
      if (principal === undefined && token === undefined) return;
      if (principal === undefined || principal === '') throw CursusFailure.of('missing_principal', [['command', req.command]]);
      if (token === undefined || token === '') throw CursusFailure.of('missing_auth_token', [['command', req.command]]);
    }
    const digest = createHash('sha256').update(token).digest('base64');
    if (this.credentials !== null && this.credentials.principal === principal && this.credentials.digest === digest && this.userId !== null) return;
    const user = await this.frontend.services.access.authenticate(principal, token, this.context.remote);
    this.userId = user.id;
    this.credentials = { principal, digest };
    if (this.frontend.settings.requireAuth) this.context.authenticated();
  }

  /** What a failed request is answered with. */
  failureOf(error: unknown, command: string): CursusFailure {
    if (error instanceof CursusFailure) return error;
    const mapped = cursusFailureOfCoreError(error);
    if (mapped !== null) {
      this.context.logger.debug('cursus request failed', { command, error });
      return mapped;
    }
    this.context.logger.error('cursus request failed', { command, error });
    return CursusFailure.of('internal_error', [['command', command]], 'the broker could not complete the request');
  }
}
