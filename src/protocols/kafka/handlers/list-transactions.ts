// ListTransactions (key 66), v0-1. Grammar: codec/messages/list-transactions.ts.
//
// Every transactional id the core coordinator holds for Kafka (scope "kafka"), filtered as
// TransactionStateManager.listTransactionStates does: by state name (names that are no state are
// echoed in unknown_state_filters and match nothing), by producer id, and (v1) by duration: only
// transactions open for at least duration_filter ms. Transactional ids have no grant in Quartet,
// so the list is the same for every authenticated user.

import { TxnState } from '../../../core/transactions.js';
import { ApiKey } from '../codec/api-keys.js';
import { kafkaTransactionScope } from '../transactions.js';
import { defineHandler } from './types.js';

const stateNames = new Set<string>(Object.values(TxnState));

export const listTransactionsHandler = defineHandler({
  apiKey: ApiKey.ListTransactions,
  minVersion: 0,
  maxVersion: 1,
  handle(request, { frontend }) {
    const unknownStateFilters = request.stateFilters.filter((s) => !stateNames.has(s));
    const states = new Set(request.stateFilters.filter((s) => stateNames.has(s)));
    if (request.stateFilters.length > 0 && states.size === 0) return { throttleTimeMs: 0, errorCode: 0, unknownStateFilters, transactionStates: [] };
    const producerIds = new Set(request.producerIdFilters);
    const now = frontend.clock.now();
    const transactionStates = frontend.broker.transactions
      .list(kafkaTransactionScope)
      .filter((t) => states.size === 0 || states.has(t.state))
      .filter((t) => producerIds.size === 0 || producerIds.has(t.producerId))
      .filter((t) => request.durationFilter < 0 || (t.startedAt >= 0 && now - t.startedAt >= request.durationFilter))
      .sort((a, b) => (a.transactionalId < b.transactionalId ? -1 : a.transactionalId > b.transactionalId ? 1 : 0))
      .map((t) => ({ transactionalId: t.transactionalId, producerId: t.producerId, transactionState: t.state }));
    return { throttleTimeMs: 0, errorCode: 0, unknownStateFilters, transactionStates };
  },
});
