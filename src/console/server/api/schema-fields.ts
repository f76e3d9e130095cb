/**
 * An event's fields as the JSON schemas name and describe them (`schemas/events/*.schema.json`,
 * shipped with the package), so the page can say what `data.expected_shutdown_at` means.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface EventField {
  readonly path: string;
  readonly type: string;
  readonly description?: string;
  readonly value: string;
}

interface SchemaNode {
  readonly description?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
}

export type FieldDescriber = (event: unknown) => readonly EventField[];

/** Reads every event schema once; a missing or unreadable directory describes nothing (values still listed). */
export function fieldDescriber(schemasDirectory: string): FieldDescriber {
  const byAction = new Map<string, SchemaNode>();
  let files: string[] = [];
  try {
    files = readdirSync(schemasDirectory).filter((file) => file.endsWith('.schema.json'));
  } catch {
    // The page still shows the event; only the descriptions are missing.
  }
  for (const file of files) {
    try {
      const schema = JSON.parse(readFileSync(join(schemasDirectory, file), 'utf8')) as SchemaNode;
      const action = (schema.properties?.['action'] as { const?: unknown } | undefined)?.const;
      if (typeof action === 'string') byAction.set(action, schema);
    } catch {
      // One unreadable schema costs its descriptions only.
    }
  }
  return (event) => describeFields(event, byAction);
}

function describeFields(event: unknown, schemas: ReadonlyMap<string, SchemaNode>): EventField[] {
  if (typeof event !== 'object' || event === null) return [];
  const record = event as Record<string, unknown>;
  const schema = typeof record['action'] === 'string' ? schemas.get(record['action']) : undefined;
  const fields: EventField[] = [];
  const walk = (value: Record<string, unknown>, node: SchemaNode | undefined, prefix: string) => {
    for (const [name, item] of Object.entries(value)) {
      const child = node?.properties?.[name];
      const path = prefix + name;
      if (typeof item === 'object' && item !== null && !Array.isArray(item)) {
        walk(item as Record<string, unknown>, child, `${path}.`);
        continue;
      }
      const description = child?.description;
      fields.push({
        path,
        type: item === null ? 'null' : Array.isArray(item) ? 'array' : typeof item,
        ...(description === undefined ? {} : { description }),
        value: typeof item === 'string' ? item : JSON.stringify(item),
      });
    }
  };
  walk(record, schema, '');
  return fields;
}
