// Schemas -> TypeScript (json-schema-to-typescript) -> schemas again (typescript-json-schema):
// for every action, what a receiver relies on must survive the round trip.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as TJS from 'typescript-json-schema';
import { beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_ACTIONS } from '../../src/index.js';

const root = join(import.meta.dirname, '../..');
type Schema = { [key: string]: any };
const shared = JSON.parse(readFileSync(join(root, 'schemas/shared.schema.json'), 'utf8')) as Schema;
const eventSchema = (action: string): Schema =>
  JSON.parse(readFileSync(join(root, `schemas/events/${action.replaceAll(':', '.')}.schema.json`), 'utf8'));

/** Follows a reference into shared.schema.json; the description beside a $ref is ignored. */
function resolve(schema: Schema): Schema {
  const ref = schema['$ref'] as string | undefined;
  return ref === undefined ? schema : shared['definitions'][ref.split('/').pop()!];
}
const sorted = (values: unknown[] | undefined) => [...(values ?? [])].map(String).sort();

let generator: TJS.JsonSchemaGenerator;
beforeAll(() => {
  const program = TJS.getProgramFromFiles([join(root, 'src/generated/events.ts')], { strictNullChecks: true, skipLibCheck: true });
  generator = TJS.buildGenerator(program, { required: true, ref: false, aliasRef: false, topRef: false })!;
}, 60_000);

describe.each(WEBHOOK_ACTIONS.map((action) => [action] as const))('%s', (action) => {
  it('keeps the action literal, the required fields, every enum and the exact field list', () => {
    const source = eventSchema(action);
    const back = generator.getSchemaForSymbol(source['title']) as Schema;

    expect(back['properties'].action.const).toBe(action);
    expect(sorted(back['required'])).toEqual(sorted(source['required']));

    const status = resolve(source['properties'].status);
    if (status['enum'] !== undefined || status['const'] !== undefined) {
      expect(sorted(back['properties'].status.enum ?? [back['properties'].status.const])).toEqual(
        sorted(status['enum'] ?? [status['const']]),
      );
    } else {
      // Open status: the known values plus any string.
      const branches = back['properties'].status.anyOf as Schema[];
      expect(sorted(branches.find((b) => b['enum'])?.['enum'])).toEqual(['cancelled', 'error', 'skipped', 'start', 'success']);
    }

    const sourceData = source['properties'].data;
    const backData = back['properties'].data;
    expect(sorted(backData.required)).toEqual(sorted(sourceData.required));
    expect(sorted(Object.keys(backData.properties))).toEqual(sorted(Object.keys(sourceData.properties)));
    for (const [field, fieldSchema] of Object.entries(sourceData.properties as Record<string, Schema>)) {
      const expected = resolve(fieldSchema);
      const actual = backData.properties[field] as Schema;
      if (expected['enum'] !== undefined) expect(sorted(actual['enum']), field).toEqual(sorted(expected['enum']));
      if (expected['const'] !== undefined) expect(actual['const'], field).toBe(expected['const']);
      if (expected['x-known-values'] !== undefined) {
        // A single known value comes back as a const (`reason: 'cap-raised'`).
        expect(sorted(actual['enum'] ?? [actual['const']]), field).toEqual(sorted(expected['x-known-values']));
      }
      if (expected['tsType'] === 'number') expect(actual['type'], field).toBe('number');
    }
  });
});
