import { validators } from '../generated/validators.js';
import { WebhookPayloadError } from './errors.js';

interface SchemaError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
}
type CompiledValidator = ((value: unknown) => boolean) & { errors?: SchemaError[] | null };

const byAction = validators as unknown as Record<string, CompiledValidator | undefined>;

/** Describes the rule that failed, never the value that failed it. */
function describe(error: SchemaError): { path: string; reason: string } {
  const { keyword, params } = error;
  switch (keyword) {
    case 'required':
      return { path: `${error.instancePath}/${String(params['missingProperty'])}`, reason: 'is required but missing' };
    case 'type':
      return { path: error.instancePath, reason: `must be a${params['type'] === 'object' ? 'n' : ''} ${String(params['type'])}` };
    case 'const':
      return { path: error.instancePath, reason: `must be ${JSON.stringify(params['allowedValue'])}` };
    case 'enum':
      return {
        path: error.instancePath,
        reason: `must be one of ${(params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    case 'pattern':
      return { path: error.instancePath, reason: `does not match the expected format ${String(params['pattern'])}` };
    case 'minLength':
      return { path: error.instancePath, reason: 'must not be empty' };
    case 'anyOf':
      return { path: error.instancePath, reason: 'must be an integer (a number or a decimal string)' };
    default:
      return { path: error.instancePath, reason: `breaks the schema rule "${keyword}"` };
  }
}

/** Checks a known action's payload against its precompiled schema. */
export function assertValidEvent(action: string, event: unknown): void {
  const validator = byAction[action];
  if (validator === undefined || validator(event)) return;
  const first = validator.errors?.[0];
  const { path, reason } = first === undefined ? { path: '', reason: 'is invalid' } : describe(first);
  throw new WebhookPayloadError('invalid_event', `Invalid ${action} event: ${path === '' ? 'the payload' : path} ${reason}.`, path, action);
}
