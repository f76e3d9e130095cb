// Compiled against the packed package on TypeScript 5.9 and 7 only: Fastify 5's and Express 5's
// own type definitions need TypeScript 5.4 or later (NoInfer), whatever this package does.
import { createReceiver } from 'rack-webhooks';
const receiver = createReceiver({ secrets: 'k' });
import express from 'express';
import Fastify from 'fastify';
import { createServer } from 'node:http';
import { webhookMiddleware } from 'rack-webhooks/express';
import rackWebhooks from 'rack-webhooks/fastify';
import { createNodeHandler } from 'rack-webhooks/node';
import { createFetchHandler } from 'rack-webhooks/web';
const app = express();
app.post('/webhooks', webhookMiddleware(receiver, { maxBodyBytes: 1024 }));
const fastify = Fastify();
await fastify.register(rackWebhooks, { receiver, path: '/hooks', acknowledge: 'before-handlers' });
// @ts-expect-error the plugin needs a receiver
await fastify.register(rackWebhooks, { path: '/hooks' });
createServer(createNodeHandler(receiver));
const fetchHandler: (request: Request) => Promise<Response> = createFetchHandler(receiver);
console.log(fetchHandler);
export {};
