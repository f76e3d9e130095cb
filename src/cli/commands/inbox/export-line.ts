/**
 * The line `inbox export` writes and `inbox import` reads: one JSON object per delivery,
 *
 *   {"id":"12","received_at":"2026-04-27T10:30:01.234Z","signature":"t=...,v1=...","body":"{\"action\":...}"}
 *
 * `body` is the raw body exactly as received, as a JSON string (`body_base64` when it is not
 * UTF-8), so the bytes the signature covers survive whatever else the body holds (line breaks,
 * odd spacing, a BOM). A `listen --log` line is the body alone: it has no signature, so it cannot
 * be re-verified; `export --bodies` writes that format for the tools that read it. A delivery
 * stored as `ignored` (an `ignore` pattern, an unknown action) carries `"state":"ignored"`, so an
 * import keeps it a record instead of running handlers the source chose not to run.
 */
import type { StoredDeliveryDetail } from '../../../inbox/facade/index.js';
import { bodyText } from './render.js';

export interface ExportedDelivery {
  readonly receivedAt: Date;
  readonly signature: string;
  readonly body: Uint8Array;
  /** Stored as `ignored` at the source: stored as `ignored` again. */
  readonly ignored: boolean;
}

export type ParsedLine =
  { readonly delivery: ExportedDelivery } | { readonly code: 'invalid_line' | 'missing_signature'; readonly reason: string };

export function exportLine(delivery: StoredDeliveryDetail): string {
  const text = bodyText(delivery.body);
  const body = text === undefined ? { body_base64: Buffer.from(delivery.body).toString('base64') } : { body: text };
  const state = delivery.state === 'ignored' ? { state: 'ignored' } : {};
  return `${JSON.stringify({ id: delivery.id, received_at: delivery.receivedAt.toISOString(), signature: delivery.signature, ...state, ...body })}\n`;
}

const encoder = new TextEncoder();

function invalid(reason: string): ParsedLine {
  return { code: 'invalid_line', reason };
}

export function parseExportLine(line: string): ParsedLine {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return invalid('not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return invalid('not a JSON object');
  const record = value as Record<string, unknown>;
  if (record['signature'] === undefined && typeof record['action'] === 'string') {
    return {
      code: 'missing_signature',
      reason:
        'a body without its signature (a listen --log or export --bodies line) cannot be re-verified; import reads inbox export lines',
    };
  }
  const { signature, received_at: receivedAt, body, body_base64: bodyBase64, state } = record;
  if (typeof signature !== 'string' || signature === '') return invalid('no "signature" string');
  if (typeof receivedAt !== 'string' || Number.isNaN(Date.parse(receivedAt))) return invalid('no "received_at" time');
  let bytes: Uint8Array;
  if (typeof body === 'string') bytes = encoder.encode(body);
  else if (typeof bodyBase64 === 'string') bytes = Buffer.from(bodyBase64, 'base64');
  else return invalid('no "body" string');
  if (state !== undefined && state !== 'ignored') return invalid('"state" is "ignored" or absent');
  return { delivery: { receivedAt: new Date(receivedAt), signature, body: bytes, ignored: state === 'ignored' } };
}
