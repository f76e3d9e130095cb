// Which store failures the receiver waits out (issue 18): the errors as pg, postgres.js and Node
// report them, classified as passing (retried within the request) or final (answered at once).
import { describe, expect, it } from 'vitest';
import { inboxError } from '../../src/database/errors.js';
import { transientCause } from '../../src/inbox/store/outage/transient.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
const wrapped = (error: unknown) => inboxError(error, 'rack_webhooks_inbox', 'storing a delivery');

describe('transientCause', () => {
  it.each([
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'), 'ECONNREFUSED'],
    ['a reset connection', withCode('read ECONNRESET', 'ECONNRESET'), 'ECONNRESET'],
    // Five capitals, a SQLSTATE's shape: a write to a PGlite owner that had just closed the connection.
    ['a write to a closed connection', withCode('write EPIPE', 'EPIPE'), 'EPIPE'],
    ['pg: a connection cut', new Error('Connection terminated unexpectedly'), 'connection_terminated'],
    ['pg-pool: every connection busy (saturation)', new Error('timeout exceeded when trying to connect'), 'pool_timeout'],
    [
      'postgres.js: a connection closed under a query',
      withCode('write CONNECTION_CLOSED 127.0.0.1:5432', 'CONNECTION_CLOSED'),
      'CONNECTION_CLOSED',
    ],
    ['postgres.js: connect timeout', withCode('write CONNECT_TIMEOUT 127.0.0.1:5432', 'CONNECT_TIMEOUT'), 'CONNECT_TIMEOUT'],
    ['admin shutdown', withCode('terminating connection due to administrator command', '57P01'), '57P01'],
    ['starting up', withCode('the database system is starting up', '57P03'), '57P03'],
    ['a read-only standby', withCode('cannot execute INSERT in a read-only transaction', '25006'), '25006'],
    ['a statement timeout', withCode('canceling statement due to statement timeout', '57014'), '57014'],
    ['a deadlock', withCode('deadlock detected', '40P01'), '40P01'],
    ['too many connections', withCode('sorry, too many clients already', '53300'), '53300'],
    ['localhost on two addresses', new AggregateError([withCode('a', 'ECONNREFUSED'), withCode('b', 'ECONNREFUSED')]), 'ECONNREFUSED'],
  ])('%s passes: %s', (_name, error, cause) => {
    expect(transientCause(wrapped(error))).toBe(cause);
  });

  it('a socket error with a SQLSTATE shape is a lost connection (503), not a refused statement (500)', () => {
    expect(wrapped(withCode('write EPIPE', 'EPIPE'))).toMatchObject({ code: 'inbox_unavailable', status: 503 });
  });

  it.each([
    ['a missing table (inbox_not_migrated)', withCode('relation "x" does not exist', '42P01')],
    ['a unique violation', withCode('duplicate key value', '23505')],
    ['bad credentials', withCode('password authentication failed', '28P01')],
    ['postgres.js after sql.end()', withCode('write CONNECTION_ENDED 127.0.0.1:5432', 'CONNECTION_ENDED')],
    ['pg after client.end()', new Error('Connection terminated')],
    ['a pg Client whose connection is gone', new Error('Client has encountered a connection error and is not queryable')],
    ['a pool ended by the application', new Error('Cannot use a pool after calling end on the pool')],
    ['a bug', new TypeError('x is not a function')],
  ])('%s is final', (_name, error) => {
    expect(transientCause(wrapped(error))).toBeUndefined();
  });
});
