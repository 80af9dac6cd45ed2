// AUTH (spec §8): `principal` and `token` are checked by the connection before any command runs,
// as the inline `principal`/`auth_token` of every request are (../connection.ts), so that the
// connection's principal changes in one place; this handler only answers for the principal the
// request now runs as. A wrong token never gets here: authentication_failed.

import { CursusFailure, type CursusCommandHandler } from '../handler.js';

const auth: CursusCommandHandler = {
  command: 'AUTH',
  permissions: [],
  handle(ctx, req) {
    const name = ctx.principal.name;
    if (name === null) throw CursusFailure.of('authentication_failed', [['command', req.command]]);
    return { kind: 'text', fields: [['principal', name], ['authenticated', 'true']] };
  },
};

export const authHandlers: readonly CursusCommandHandler[] = [auth];
