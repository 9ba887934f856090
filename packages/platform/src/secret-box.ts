import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** Seals secrets that must be read back (HMAC keys), bound to a context such as their owner's id. */
export interface SecretBox {
  /** `context` (the trigger or webhook id) is bound to the sealed value: it cannot be moved to another. */
  seal(secret: string, context: string): string;
  open(sealed: string, context: string): string;
}

/**
 * How signing secrets (inbound trigger secrets, outbound webhook secrets) rest in Redis. A hash
 * would not do: an HMAC needs the key itself. So with a key set (TRIGGER_SECRET_KEY,
 * WEBHOOK_SECRET_KEY) they are sealed with AES-256-GCM under it, the key living outside Redis
 * (a Kubernetes Secret), with the owner's id as associated data: a Redis dump or replica alone
 * reveals no secret, and a sealed value copied onto another owner fails to open. Without a key
 * (local development) they are stored as they are; the service warns at start. Either way a
 * secret is returned only once, by create.
 */
export class AesGcmSecretBox implements SecretBox {
  readonly #key: Buffer | undefined;
  readonly #keyName: string;

  /** `key`: 32 bytes, or undefined to store secrets as they are; `keyName`: its variable, for messages. */
  constructor(key: Buffer | undefined, keyName = 'TRIGGER_SECRET_KEY') {
    if (key && key.length !== 32) throw new Error(`${keyName} must be 32 bytes`);
    this.#key = key;
    this.#keyName = keyName;
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
    if (!this.#key) throw new Error(`a secret is sealed but ${this.#keyName} is not set`);
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url')).setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
}
