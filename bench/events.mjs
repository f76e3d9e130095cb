import { readFileSync } from 'node:fs';
import { parseEvent } from '../dist/index.js';
import '../dist/validate.js'; // registers the validators for `validate: true`
import { checkBar, compare, printTable } from './harness.mjs';

/** The armed event is the richest real payload; padded with one unknown field to exactly 1 KiB. */
function oneKibEvent() {
  const event = JSON.parse(readFileSync(new URL('../test/fixtures/events/app.budget.auto-shutdown.armed.json', import.meta.url), 'utf8'));
  const base = JSON.stringify({ ...event, data: { ...event.data, note: '' } });
  const text = JSON.stringify({ ...event, data: { ...event.data, note: 'x'.repeat(1024 - base.length) } });
  if (Buffer.byteLength(text) !== 1024) throw new Error(`bench event is ${Buffer.byteLength(text)} bytes`);
  return text;
}

export async function benchEvents() {
  const text = oneKibEvent();
  const bytes = Buffer.from(text);
  const rows = await compare([
    { name: 'floor: JSON.parse(text)', fn: () => JSON.parse(text) },
    { name: 'parseEvent(text)', fn: () => parseEvent(text) },
    { name: 'parseEvent(text, { validate: true })', fn: () => parseEvent(text, { validate: true }) },
    { name: 'JSON.parse(buffer.toString())', fn: () => JSON.parse(bytes.toString()) },
    { name: 'parseEvent(buffer)', fn: () => parseEvent(bytes) },
    { name: 'parseEvent(buffer, { validate: true })', fn: () => parseEvent(bytes, { validate: true }) },
  ]);
  printTable('parseEvent on a 1 KiB app:budget:auto-shutdown:armed event', rows);
  let ok = checkBar('parseEvent / JSON.parse', rows[1].ratio, 1.3);
  ok = checkBar('parseEvent with validate / JSON.parse', rows[2].ratio, 2.5) && ok;
  return { ok };
}
