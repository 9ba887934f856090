import { randomBytes } from 'node:crypto';

/** `whk_` + 32 lowercase hex of 128 random bits (docs/api/webhooks.md#routes). */
export function newWebhookId(): string {
  return `whk_${randomBytes(16).toString('hex')}`;
}

/** True when `value` has the shape of a webhook id; anything else cannot exist. */
export function isWebhookId(value: string): boolean {
  return /^whk_[0-9a-f]{32}$/.test(value);
}

/** The Standard Webhooks form: `whsec_` + base64 of 32 random bytes (the HMAC key is those bytes). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
