import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AesGcmSecretBox } from './secret-box.js';

describe('secret box', () => {
  const key = randomBytes(32);

  it('secret box — with a key, the stored form holds no trace of the secret and opens to it', () => {
    const box = new AesGcmSecretBox(key);
    const sealed = box.seal('whsec_abc', 'trg_1');
    expect(sealed).toMatch(/^gcm1\./);
    expect(sealed).not.toContain('abc');
    expect(box.open(sealed, 'trg_1')).toBe('whsec_abc');
  });

  it('secret box — a sealed secret does not open for another trigger or under another key', () => {
    const sealed = new AesGcmSecretBox(key).seal('whsec_abc', 'trg_1');
    expect(() => new AesGcmSecretBox(key).open(sealed, 'trg_2')).toThrow();
    expect(() => new AesGcmSecretBox(randomBytes(32)).open(sealed, 'trg_1')).toThrow();
    expect(() => new AesGcmSecretBox(undefined).open(sealed, 'trg_1')).toThrow(/TRIGGER_SECRET_KEY/);
  });

  it('secret box — without a key secrets are kept as they are, and still open once a key is set', () => {
    const plain = new AesGcmSecretBox(undefined).seal('whsec_abc', 'trg_1');
    expect(new AesGcmSecretBox(key).open(plain, 'trg_1')).toBe('whsec_abc');
  });
});
