import type { HealthOptions, InboxHealth, InboxReadiness } from './health.js';

/** What {@link healthHandler} needs of an inbox. */
export interface HealthSource {
  /** The full report, as `inbox.health()` gives it. */
  health(options?: HealthOptions): Promise<InboxHealth>;
  /** The cheap check, as `inbox.readiness()` gives it. */
  readiness(): Promise<InboxReadiness>;
}

/** Options of {@link healthHandler}. */
export interface HealthHandlerOptions extends HealthOptions {
  /**
   * Answers are reused for this long, in ms: probes (or anyone who finds the URL) cost at most one
   * check of the database per interval. `0` checks on every request.
   *
   * @defaultValue `1000`
   */
  cacheMs?: number;
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
  /** Readiness: 200 `{"status":"ready"}` when the database answers and the schema is current, else 503 with the reasons. */
  readonly ready: HealthEndpoint;
  /** The whole `inbox.health()` report as JSON: 200 for `ok` and `warning`, 503 for `unhealthy` and `unreachable`. */
  readonly health: HealthEndpoint;
}

interface Answer {
  readonly status: number;
  readonly body: string;
}

const HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

function isNodeResponse(value: unknown): value is NodeResponse {
  return typeof (value as NodeResponse | null)?.writeHead === 'function' && typeof (value as NodeResponse).end === 'function';
}

function endpoint(answer: () => Promise<Answer>): HealthEndpoint {
  return (async (_request?: unknown, res?: unknown) => {
    const { status, body } = await answer();
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

/**
 * Liveness, readiness and health endpoints over an inbox, for Node's http, Express and fetch-style
 * runtimes. Liveness says the process answers (a database outage must not restart every pod);
 * readiness says this process can store deliveries (database reachable, schema current); health
 * is the operator's full report. Workers and backlog do not make a process unready: they are the
 * inbox's state, not this process's, and show in `health`.
 *
 * @example
 * ```ts
 * import { healthHandler } from 'rack-webhooks/inbox';
 *
 * const probes = healthHandler(inbox);
 * app.get('/livez', probes.live);       // Express, or Node's http: probes.ready(req, res)
 * app.get('/readyz', probes.ready);
 * app.get('/health', probes.health);
 * // fetch-style: return probes.ready(request);
 * ```
 */
export function healthHandler(inbox: HealthSource, options: HealthHandlerOptions = {}): HealthEndpoints {
  if (typeof inbox?.health !== 'function' || typeof inbox.readiness !== 'function')
    throw new TypeError('healthHandler expects an inbox from createInbox()');
  const cacheMs = options.cacheMs ?? 1000;
  if (!(cacheMs >= 0) || !Number.isFinite(cacheMs))
    throw new RangeError(`cacheMs must be a finite number of ms >= 0, got ${String(cacheMs)}`);
  const { cacheMs: _unused, ...healthOptions } = options;
  const ready = cached(cacheMs, async () => {
    const { ready: isReady, reasons } = await inbox.readiness().catch((error: unknown) => ({
      ready: false,
      reasons: [error instanceof Error ? error.message : 'the readiness check failed'],
    }));
    return { status: isReady ? 200 : 503, body: JSON.stringify(isReady ? { status: 'ready' } : { status: 'not_ready', reasons }) };
  });
  const health = cached(cacheMs, async () => {
    const report = await inbox.health(healthOptions).catch((error: unknown) => ({
      status: 'unhealthy',
      ok: false,
      reasons: [error instanceof Error ? error.message : 'the health check failed'],
    }));
    return { status: report.ok ? 200 : 503, body: JSON.stringify(report) };
  });
  const live = Promise.resolve({ status: 200, body: '{"status":"live"}' });
  return { live: endpoint(() => live), ready: endpoint(ready), health: endpoint(health) };
}
