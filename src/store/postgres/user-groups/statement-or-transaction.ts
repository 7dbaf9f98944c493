/**
 * How PostgreSQL writes a create, a token rotation or a deletion, decided here and nowhere else
 * (docs/adr/0019-postgresql-group-writes.md). Each has two writes, stated once each where it is used (single-writes.ts):
 * - `statement`: the change and its audit event as one statement (no BEGIN and COMMIT round trips),
 *   which writes nothing while an enabled endpoint of the tenant wants the event (NO_ENDPOINT_WANTS:
 *   its webhook event must be written with the whole group) or when it finds nothing to do; it then
 *   answers undefined;
 * - `transaction`: change, audit event and webhook events in one transaction (audit.withAudit), which
 *   decides afresh on the rows as they are then.
 * The store contract runs each operation with an endpoint that wants its event and with one that does
 * not (test/store/contract/webhook-outbox.contract.ts).
 */
export interface TwoWayWrite<A extends unknown[], R> {
  statement(...args: A): Promise<R | undefined>;
  transaction(...args: A): Promise<R>;
}

export const written =
  <A extends unknown[], R>(write: TwoWayWrite<A, R>) =>
  async (...args: A): Promise<R> =>
    (await write.statement(...args)) ?? write.transaction(...args);
