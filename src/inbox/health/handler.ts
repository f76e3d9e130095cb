import { checkStates, HEALTH_CHECKS, READINESS_CHECKS } from './checks.js';
import { boundMs, maxPendingAge, type HealthOptions, type InboxHealth } from './health.js';
import { boundedReadiness, type InboxReadiness } from './readiness.js';
import { verdictLog, type HealthLogger } from './probe-log.js';

/** What {@link healthHandler} needs of an inbox. */
export interface HealthSource {
  /** The full report, as `inbox.health()` gives it. */
  health(options?: HealthOptions): Promise<InboxHealth>;
  /** The cheap check, as `inbox.readiness()` gives it. */
  readiness(): Promise<InboxReadiness>;
}

/**
 * Options of {@link healthHandler}. `Request` is what your server passes the endpoint first: Node's
 * `IncomingMessage` (Express's `req`), a fetch `Request`, or `undefined` when called with nothing.
 */
export interface HealthHandlerOptions<Request = unknown> extends HealthOptions {
  /**
   * Answers are reused for this long, in ms: probes (or anyone who finds the URL) cost at most one
   * check of the database per interval. `0` checks on every request.
   *
   * @defaultValue `1000`
   */
  cacheMs?: number;
  /**
   * How long readiness waits for the database, in ms: a check that has not answered by then (a
   * database host gone silent, a stuck connection) answers 503 `not_ready` with `database` failing,
   * and a check still under way is not started again for the next probes. The default is above the
   * drivers' own bounds (a pg pool's `connectionTimeoutMillis`, PGlite's owner check of about 10 s),
   * so that their reason, which names what failed, is the one readiness gives when they answer.
   *
   * @defaultValue `15000`
   */
  readyTimeoutMs?: number;
  /**
   * Who sees the detail: the reasons (the database's error text, table names) and, on `health`,
   * the whole report (workers' ids, hosts and pids, counts). Without it a probe answers its status
   * and each check's state only, so that anyone who finds the URL learns nothing of your network.
   * `true` shows the detail to every caller (mount that endpoint behind your own auth); a function
   * decides per request, e.g. for an operator's token (only `true` counts; a throw or a rejection
   * is no). The detail always goes to `logger`, `inbox health` and the console.
   *
   * @defaultValue `false`
   */
  detail?: boolean | ((request: Request) => boolean | Promise<boolean>);
  /**
   * Where the detail goes when a probe's verdict changes (its status or a check's state): one
   * record then, not one per probe, passwords in URLs masked. `false` logs nothing.
   *
   * @defaultValue one line on `console.warn` (`console.info` once all is ok again)
   */
  logger?: HealthLogger;
  /**
   * Whether this process takes deliveries, asked on every readiness probe (never cached): once it
   * is false, readiness answers 503 `{"status":"shutting_down","checks":{"shutdown":"failing"}}`
   * without asking the database, so that a load balancer moves away while the process drains.
   * Pass `createShutdown(server).ready` (`rack-webhooks/node`). A throw counts as not ready.
   *
   * @defaultValue always ready
   */
  ready?: () => boolean;
}

/** A Node `ServerResponse` as far as the handler uses it (Express's `res` is one). */
export interface NodeResponse {
  /** Writes the status line and headers. */
  writeHead(status: number, headers: Record<string, string>): unknown;
  /** Writes the body and ends the response. */
  end(body?: string): unknown;
}

/**
 * One endpoint: with a Node/Express `(req, res)` it writes the answer; called with a fetch
 * `Request` (or nothing) it resolves with a `Response`.
 */
export interface HealthEndpoint {
  (request?: unknown): Promise<Response>;
  (req: unknown, res: NodeResponse, next?: unknown): Promise<void>;
}

/** The three endpoints {@link healthHandler} returns. */
export interface HealthEndpoints {
  /** Liveness: 200 `{"status":"live"}` whenever the process answers; never touches the database. */
  readonly live: HealthEndpoint;
  /**
   * Readiness: 200 `{"status":"ready","checks":{"database":"ok","schema":"ok"}}` when the database
   * answers and the schema is current, else 503 `{"status":"not_ready","checks":{...}}` (also when the
   * database did not answer within `readyTimeoutMs`); once the
   * `ready` option says false, 503 `{"status":"shutting_down","checks":{"shutdown":"failing"}}`.
   * With `detail`, the `reasons` too.
   */
  readonly ready: HealthEndpoint;
  /**
   * `inbox.health()`'s verdict: `{"status":"ok","checks":{"database":"ok",...}}`, 200 for `ok` and
   * `warning`, 503 for `unhealthy` and `unreachable`; with `detail`, the whole report.
   */
  readonly health: HealthEndpoint;
}

/** A check's outcome: `body` for those the application lets see the detail, its status and checks for anyone. */
interface Answer {
  readonly code: number;
  readonly body: { readonly status: string; readonly checks?: unknown };
}

const HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

function isNodeResponse(value: unknown): value is NodeResponse {
  return typeof (value as NodeResponse | null)?.writeHead === 'function' && typeof (value as NodeResponse).end === 'function';
}

type DetailFor = (request: unknown) => Promise<boolean>;

function endpoint(answer: () => Promise<Answer>, detailFor: DetailFor): HealthEndpoint {
  return (async (request?: unknown, res?: unknown) => {
    const [{ code: status, body: shown }, detail] = await Promise.all([answer(), detailFor(request)]);
    const body = JSON.stringify(detail ? shown : { status: shown.status, checks: shown.checks });
    if (isNodeResponse(res)) {
      res.writeHead(status, HEADERS);
      res.end(body);
      return undefined;
    }
    return new Response(body, { status, headers: HEADERS });
  }) as HealthEndpoint;
}

/** One check at a time and reused for `cacheMs`: a burst of probes is one query. */
function cached(cacheMs: number, check: () => Promise<Answer>): () => Promise<Answer> {
  let last: { at: number; answer: Promise<Answer> } | undefined;
  return () => {
    const now = Date.now();
    if (last === undefined || now - last.at >= cacheMs) last = { at: now, answer: check() };
    return last.answer;
  };
}

function detailFor(option: HealthHandlerOptions<never>['detail']): DetailFor {
  if (option === undefined || option === false) return () => Promise.resolve(false);
  if (option === true) return () => Promise.resolve(true);
  if (typeof option !== 'function') throw new TypeError('healthHandler({ detail }) expects true, false or a function (request) => boolean');
  const decide = option as (request: unknown) => boolean | Promise<boolean>;
  // Fails closed: only a plain `true` shows the detail.
  return (request) =>
    Promise.resolve()
      .then(() => decide(request))
      .then(
        (shown) => shown === true,
        () => false,
      );
}

/** Readiness once the process is shutting down: no database query, and a status of its own for the logs. */
const SHUTTING_DOWN: Promise<Answer> = Promise.resolve({
  code: 503,
  body: {
    status: 'shutting_down',
    checks: { shutdown: 'failing' },
    reasons: ['this process is shutting down: it still answers the deliveries that reach it, and takes no more once its drain ends'],
  },
});

function acceptingFor(option: HealthHandlerOptions<never>['ready']): () => boolean {
  if (option === undefined) return () => true;
  if (typeof option !== 'function') throw new TypeError('healthHandler({ ready }) expects a function () => boolean, e.g. shutdown.ready');
  // Fails closed: a throw is not ready.
  return () => {
    try {
      return option() === true;
    } catch {
      return false;
    }
  };
}

/**
 * Liveness, readiness and health endpoints over an inbox, for Node's http, Express and fetch-style
 * runtimes. Anyone who reaches them learns the status and each check's state, nothing else: the
 * reasons and the report (hosts, pids, the database's error) are for `detail` callers and the log. Liveness says the process answers (a database outage must not restart every pod);
 * readiness says this process can store deliveries (database reachable, schema current); health
 * is the operator's full report. Workers and backlog do not make a process unready: they are the
 * inbox's state, not this process's, and show in `health`.
 *
 * @example
 * ```ts
 * import type { Request } from 'express';
 * import { healthHandler } from 'rack-webhooks/inbox';
 *
 * const probes = healthHandler(inbox, {
 *   // The full report only for your operators; everyone else gets { status, checks }.
 *   detail: (req: Request) => req.get('authorization') === `Bearer ${process.env.HEALTH_TOKEN}`,
 * });
 * app.get('/livez', probes.live);       // Express, or Node's http: probes.ready(req, res)
 * app.get('/readyz', probes.ready);     // {"status":"ready","checks":{"database":"ok","schema":"ok"}}
 * app.get('/health', probes.health);
 * // fetch-style: return probes.ready(request);
 * ```
 */
export function healthHandler<Request = unknown>(inbox: HealthSource, options: HealthHandlerOptions<Request> = {}): HealthEndpoints {
  if (typeof inbox?.health !== 'function' || typeof inbox.readiness !== 'function')
    throw new TypeError('healthHandler expects an inbox from createInbox()');
  const cacheMs = boundMs('cacheMs', options.cacheMs, 1000, true);
  const readyTimeoutMs = boundMs('readyTimeoutMs', options.readyTimeoutMs, 15_000);
  const { cacheMs: _cache, readyTimeoutMs: _bound, detail: _detail, logger: _logger, ready: _ready, ...healthOptions } = options;
  maxPendingAge(healthOptions);
  const detail = detailFor(options.detail as HealthHandlerOptions<never>['detail']);
  const logReady = verdictLog('ready', options.logger);
  const logHealth = verdictLog('health', options.logger);

  const accepting = acceptingFor(options.ready);
  const readiness = boundedReadiness(() => inbox.readiness(), readyTimeoutMs);
  const storeReady = cached(cacheMs, async () => {
    const unchecked = checkStates(READINESS_CHECKS, new Set(), []);
    const found = await readiness().catch((error: unknown): InboxReadiness => ({
      ready: false,
      reasons: [error instanceof Error ? error.message : 'the readiness check failed'],
      checks: unchecked,
    }));
    const status = found.ready ? 'ready' : 'not_ready';
    // A source of its own may leave the checks out: unknown then.
    const checks = found.checks ?? unchecked;
    logReady(status, found.ready && found.reasons.length === 0, checks, found.reasons);
    return { code: found.ready ? 200 : 503, body: { status, checks, reasons: found.reasons } };
  });
  const health = cached(cacheMs, async () => {
    const report = await inbox.health(healthOptions).catch((error: unknown): Pick<InboxHealth, 'status' | 'ok' | 'reasons' | 'checks'> => ({
      status: 'unhealthy',
      ok: false,
      reasons: [error instanceof Error ? error.message : 'the health check failed'],
      checks: checkStates(HEALTH_CHECKS, new Set(), []),
    }));
    logHealth(report.status, report.status === 'ok', report.checks, report.reasons);
    return { code: report.ok ? 200 : 503, body: report };
  });
  const live = Promise.resolve({ code: 200, body: { status: 'live' } });
  return {
    live: endpoint(() => live, detailFor(false)),
    ready: endpoint(() => (accepting() ? storeReady() : SHUTTING_DOWN), detail),
    health: endpoint(health, detail),
  };
}
