/**
 * rack-webhooks/testing: realistic events, signed requests and a rack emulator for receivers' tests.
 *
 * @module rack-webhooks/testing
 */
export { createTestEvent, rackTickId, rackTimestamp } from './test-event.js';
export type { TestEvent, TestEventOverrides, WireData } from './test-event.js';
export { createSignedRequest, createSignedRequestSync, toFetchRequest } from './signed-request.js';
export type { SignedRequest, SignedRequestOptions } from './signed-request.js';
export { createRackEmulator, parseReceiverEntry, DEFAULT_DISPATCH_TIMEOUT_MS } from './emulator.js';
export { parseDuration } from './duration.js';
export { deployedJson } from './deployed-json.js';
export type { DispatchResult, RackEmulator, RackEmulatorOptions, SkipReason, WebhooksConfig } from './types.js';
export { RackApiEmulator, ConnectionDropped } from './rack-api/api.js';
export type { RackApiOptions } from './rack-api/api.js';
export type { DropChoice, RackChangeOptions, SentEvent, ShutdownStep } from './rack-api/model.js';
export type { AppRecord, BuildRecord, ReleaseRecord, ShutdownRecord } from './rack-api/records.js';
export type { RackRole } from './rack-api/tokens.js';
