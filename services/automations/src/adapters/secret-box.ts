import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretBox } from '../domain/ports.js';

/**
 * How webhook secrets rest in Redis. A hash would not do: checking an HMAC needs the key itself
 * (CONTRACT §7: the key is the secret's UTF-8 bytes). So with TRIGGER_SECRET_KEY set they are
 * sealed with AES-256-GCM under that key, which lives outside Redis (a Kubernetes Secret), with
 * the trigger id as associated data: a Redis dump or replica alone reveals no secret, and a
 * sealed value copied onto another trigger fails to open. Without the key (local development)
 * they are stored as they are; the service warns at start. Either way a secret is returned
 * only once, by create.
 */
export class AesGcmSecretBox implements SecretBox {
  readonly #key: Buffer | undefined;

  /** `key`: 32 bytes, or undefined to store secrets as they are. */
  constructor(key: Buffer | undefined) {
    if (key && key.length !== 32) throw new Error('the trigger secret key must be 32 bytes');
    this.#key = key;
  }

  get sealing(): boolean {
    return this.#key !== undefined;
  }

  seal(secret: string, context: string): string {
    if (!this.#key) return `plain.${secret}`;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv).setAAD(Buffer.from(context, 'utf8'));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return ['gcm1', iv, cipher.getAuthTag(), sealed].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  open(sealed: string, context: string): string {
    if (sealed.startsWith('plain.')) return sealed.slice('plain.'.length);
    const [scheme, iv, tag, data] = sealed.split('.');
    if (scheme !== 'gcm1' || !iv || !tag || data === undefined) throw new Error('unknown sealed secret format');
    // Sealed values need the key even after it was unset: fail loudly rather than treat them as plain.
    if (!this.#key) throw new Error('a trigger secret is sealed but TRIGGER_SECRET_KEY is not set');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url')).setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
}
