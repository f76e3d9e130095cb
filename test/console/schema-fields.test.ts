// The console's detail view names each field as the schemas describe it: the field notes' fields
// and the newest action included, from the schemas the package ships.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fieldDescriber } from '../../src/console/server/api/schema-fields.js';
import { fixtureFor } from '../events/fixtures.js';

const describeFields = fieldDescriber(join(import.meta.dirname, '../../schemas/events'));

describe('schema field descriptions', () => {
  it('describe every data field of a deployed rack’s :fired, each value as sent', () => {
    const { json } = fixtureFor('app:budget:auto-shutdown:fired');
    const fields = describeFields(json);
    expect(fields.filter((f) => f.path.startsWith('data.')).map((f) => f.path)).toEqual(Object.keys(json.data).map((k) => `data.${k}`));
    for (const field of fields) expect(field.description, field.path).toEqual(expect.any(String));
    expect(fields).toContainEqual({
      path: 'data.shut_down_services',
      type: 'string',
      description: 'Services scaled to zero, comma-separated.',
      value: 'worker,web',
    });
  });

  it('describe release:agent-autoscale-ignored and leave a field no schema has undescribed', () => {
    const { json } = fixtureFor('release:agent-autoscale-ignored');
    const fields = describeFields({ ...json, data: { ...json.data, region: 'eu-west-1' } });
    expect(fields).toContainEqual(
      expect.objectContaining({
        path: 'data.service',
        description: 'Agent service whose autoscale settings are ignored.',
        value: 'log-shipper',
      }),
    );
    expect(fields).toContainEqual({ path: 'data.region', type: 'string', value: 'eu-west-1' });
  });
});
