// Compiled against the packed package by scripts/check-package.mjs, on several TypeScript versions.
import { WebhookVerificationError, parseSignatureHeader, sign, verify, type VerifiedSignature, type WebhookVerificationErrorCode } from 'rack-webhooks';

const header: string = await sign('{}', { secrets: ['a', 'b'], timestamp: 1 });
const result: VerifiedSignature = await verify('{}', header, { secrets: 'a,b', tolerance: Infinity, secretEncoding: 'utf8' });
const index: number = result.secretIndex;
const parsed: { timestamp: number; signatures: string[] } = parseSignatureHeader(header);
try {
  await verify(new Uint8Array(2), null, { secrets: 'a' });
} catch (error) {
  if (error instanceof WebhookVerificationError) {
    const code: WebhookVerificationErrorCode = error.code;
    const status: number = error.status;
    console.log(code, status, index, parsed);
  }
}
// @ts-expect-error a parsed object is not a raw payload
await verify({ action: 'x' }, header, { secrets: 'a' });
// @ts-expect-error base64 is not a supported key encoding
await verify('{}', header, { secrets: 'a', secretEncoding: 'base64' });
export {};
