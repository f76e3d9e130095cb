import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { schemaSql } from '../../src/inbox.js';
import { resolveTableNames } from '../../src/inbox/schema/table-name.js';

describe('sql/inbox.sql', () => {
  it('is the migrations rendered for the default table (regenerate: npm run generate:sql)', () => {
    expect(readFileSync(new URL('../../sql/inbox.sql', import.meta.url), 'utf8')).toBe(schemaSql());
  });

  it('names everything after the table, quoted and schema-qualified', () => {
    const script = schemaSql('ops.deliveries');
    expect(script).toContain('CREATE TABLE "ops"."deliveries" (');
    expect(script).toContain('CREATE TABLE "ops"."deliveries_attempts" (');
    expect(script).toContain('CREATE TABLE IF NOT EXISTS "ops"."deliveries_migrations" (');
    expect(script).not.toContain('rack_webhooks_inbox');
  });

  it('refuses a table name that is not a plain identifier', () => {
    for (const bad of ['', 'a.b.c', 'drop table x;', 'a-b', '1abc', 'x'.repeat(60), '"quoted"']) {
      expect(() => resolveTableNames(bad), bad).toThrow(TypeError);
    }
    expect(resolveTableNames('Ops.Deliveries_2').deliveries).toBe('"Ops"."Deliveries_2"');
  });
});
