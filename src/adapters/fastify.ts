/**
 * rack-webhooks/fastify: a Fastify 5 plugin that owns the webhook route in its own scope.
 *
 * @module rack-webhooks/fastify
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AnyReceiver as Receiver } from '../receiver/types.js';
import { writeNodeResponse } from './node.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  errorResponse,
  handleWebhookRequest,
  refusalLogFields,
  respond,
  type AdapterOptions,
  type WebhookResponse,
} from './core.js';
import { observeReceivers } from '../telemetry/receive.js';

export type { AdapterOptions, WebhookResponse } from './core.js';

/** Options of the Fastify plugin: the receiver, the route, and the {@link AdapterOptions}. */
export interface FastifyWebhookOptions extends AdapterOptions {
  /** A receiver from `createReceiver`, with or without an inbox. */
  receiver: Receiver;
  /**
   * Route path inside the plugin's prefix.
   *
   * @defaultValue `'/webhooks'`
   */
  path?: string;
}

const ALL_METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'] as const;

/**
 * Requests Fastify itself refuses before the handler runs carry `statusCode`, not `status`: a body
 * over the limit, a content type no parser takes, a content-length that does not match the body.
 * Each keeps its 4xx; only the receiver's own errors and real failures go through errorResponse.
 */
function fastifyClientError(statusCode: number | undefined): WebhookResponse | undefined {
  if (statusCode === 413) return respond(413, { error: 'payload_too_large' });
  if (statusCode === 415) return respond(415, { error: 'unsupported_media_type' });
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) return respond(statusCode, { error: 'bad_request' });
  return undefined;
}

function send(request: FastifyRequest, reply: FastifyReply, response: WebhookResponse): FastifyReply {
  const level = response.status >= 500 ? 'error' : response.status >= 400 ? 'warn' : 'info';
  request.log[level]({ webhook: { status: response.status, ...response.result, ...refusalLogFields(response.cause) } }, 'rack webhook');
  return reply.code(response.status).headers(response.headers).send(response.body);
}

/**
 * `app.register(rackWebhooks, { receiver, path: '/webhooks' })`. The plugin is encapsulated: its
 * scope swaps every content-type parser for one that keeps the raw Buffer, so the app's other
 * routes keep their normal JSON parsing. Fastify's `bodyLimit` applies unless `maxBodyBytes` is given.
 * It logs one line per delivery through `request.log`. Also the module's default export.
 * The request path itself is the shared adapter core's, as in every other adapter: Fastify has
 * read the body (up to the limit) by the time the handler runs, so the core's read is that Buffer.
 *
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import { createReceiver } from 'rack-webhooks';
 * import rackWebhooks from 'rack-webhooks/fastify';
 *
 * const receiver = createReceiver({ secrets: process.env.RACK_WEBHOOK_SECRETS! });
 * const app = Fastify({ logger: true });
 * await app.register(rackWebhooks, { receiver, path: '/webhooks' }); // add `prefix` as usual
 * ```
 */
const rackWebhooks: FastifyPluginAsync<FastifyWebhookOptions> = async (fastify, options) => {
  const { receiver, path = '/webhooks' } = options;
  if (typeof receiver?.receive !== 'function') throw new TypeError('rack-webhooks/fastify: pass { receiver } from createReceiver()');
  const maxBodyBytes = options.maxBodyBytes ?? fastify.initialConfig.bodyLimit ?? DEFAULT_MAX_BODY_BYTES;
  const coreOptions = { ...options, maxBodyBytes };
  // Spans and metrics of every receiver, this one included, once an OpenTelemetry SDK is registered.
  observeReceivers();

  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (_request, body, done) => done(null, body));
  fastify.setErrorHandler(async (error: { statusCode?: number }, request, reply) => {
    const refused = fastifyClientError(error.statusCode);
    const response = refused ?? errorResponse(error);
    if (response.status >= 500) request.log.error({ err: error }, 'rack webhook failed');
    // Refused by Fastify before the handler ran: the receiver counts it (inbox, telemetry) as the other adapters' refusals.
    if (refused !== undefined)
      await receiver.reportRefusal?.((refused.result as { error: string }).error, { startTime: performance.now() - reply.elapsedTime });
    if (response.status === 413) {
      // Written as the Node adapter writes it: the 413 first, then the rest of the body drained
      // before the response ends, so the client gets the 413 rather than a reset.
      reply.hijack();
      return writeNodeResponse(reply.raw, response, request.raw);
    }
    return reply.code(response.status).headers(response.headers).send(response.body);
  });

  fastify.route({
    method: [...ALL_METHODS],
    url: path,
    bodyLimit: maxBodyBytes,
    // Not an async function: the only wait is the receiver's, so no extra promise per request. It
    // resolves to undefined, the sign for Fastify that the reply is sent: any other value would be
    // sent again (and the reply itself is a thenable, which the promise would stop to adopt).
    handler: (request, reply) =>
      handleWebhookRequest(
        receiver,
        {
          method: request.method,
          headers: request.headers,
          readBody: () => ({ body: (request.body as Uint8Array | undefined) ?? '' }),
          startTime: performance.now() - reply.elapsedTime,
        },
        coreOptions,
      ).then((response) => void send(request, reply, response)),
  });
};

export default rackWebhooks;
export { rackWebhooks };
