// One SASL authentication per connection: the Kafka handler calls start() on SaslHandshake and
// step() for each SaslAuthenticate (or raw v0 token). No I/O; credentials come from callbacks.

import { authenticatePlain, type PlainPasswordVerifier } from './plain.js';
import { ScramServerExchange, type ScramCredentialLookup, type ScramMechanism } from './scram.js';
import { SaslKafkaError, type SaslStepFailure, type SaslStepResult } from './types.js';

export type SaslMechanismName = 'PLAIN' | ScramMechanism;

export const saslMechanismNames: readonly SaslMechanismName[] = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'];

export interface SaslSessionOptions {
  verifyPassword: PlainPasswordVerifier;
  scramCredentials: ScramCredentialLookup;
  /** Mechanisms offered (SaslHandshake's list); all three by default. */
  enabledMechanisms?: readonly SaslMechanismName[];
  /** The server half of SCRAM nonces; random by default. */
  scramServerNonce?: () => string;
}

type SessionState =
  | { kind: 'idle' }
  | { kind: 'plain' }
  | { kind: 'scram'; exchange: ScramServerExchange }
  | { kind: 'busy' }
  | { kind: 'done'; user: string }
  | { kind: 'failed' };

function illegalState(message: string): SaslStepFailure {
  return { error: 'illegal-state', message, kafkaErrorCode: SaslKafkaError.ILLEGAL_SASL_STATE };
}

export class SaslSession {
  private state: SessionState = { kind: 'idle' };
  private chosen: SaslMechanismName | null = null;

  constructor(private readonly options: SaslSessionOptions) {}

  get enabledMechanisms(): readonly SaslMechanismName[] {
    return this.options.enabledMechanisms ?? saslMechanismNames;
  }

  get mechanism(): SaslMechanismName | null {
    return this.chosen;
  }

  /** The authenticated user, once a step has returned done. */
  get user(): string | null {
    return this.state.kind === 'done' ? this.state.user : null;
  }

  /** Picks the mechanism (SaslHandshake). Names are case-sensitive, as in Kafka. */
  start(mechanism: string): { ok: true } | SaslStepFailure {
    if (this.state.kind !== 'idle') return illegalState('SASL mechanism already chosen');
    const name = this.enabledMechanisms.find((m) => m === mechanism);
    if (name === undefined) {
      return { error: 'unsupported-mechanism', message: `Unsupported SASL mechanism ${mechanism}`, kafkaErrorCode: SaslKafkaError.UNSUPPORTED_SASL_MECHANISM };
    }
    this.chosen = name;
    this.state =
      name === 'PLAIN'
        ? { kind: 'plain' }
        : { kind: 'scram', exchange: new ScramServerExchange(name, this.options.scramCredentials, this.scramOptions()) };
    return { ok: true };
  }

  /** Feeds one client token. One step at a time; nothing after done or a failure. */
  async step(clientToken: Buffer): Promise<SaslStepResult> {
    const state = this.state;
    if (state.kind === 'idle') return illegalState('SASL token before the mechanism was chosen');
    if (state.kind === 'busy') return illegalState('SASL token while the previous one is still being checked');
    if (state.kind === 'done' || state.kind === 'failed') return illegalState('SASL exchange already finished');
    this.state = { kind: 'busy' };
    const result = state.kind === 'plain' ? await authenticatePlain(clientToken, this.options.verifyPassword) : await state.exchange.step(clientToken);
    if ('error' in result) this.state = { kind: 'failed' };
    else if (result.done) this.state = { kind: 'done', user: result.user ?? '' };
    else this.state = state;
    return result;
  }

  private scramOptions(): { serverNonce?: () => string } {
    return this.options.scramServerNonce === undefined ? {} : { serverNonce: this.options.scramServerNonce };
  }
}
