/**
 * Seals secrets the server must be able to read back (webhook signing
 * secrets: an HMAC needs the secret itself, so it cannot be hashed), so
 * that a copy of the database alone does not let anyone forge deliveries.
 * AES-256-GCM under a key derived from the server's signing secret; each
 * sealed value has its own random nonce, and a changed byte fails to open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { derivedKey } from './derived-keys.ts';

const VERSION = 'v1';

export class SecretBox {
  private key: Buffer;

  constructor(signingSecret: Buffer) {
    // A key of its own, so that the URL signatures and this cipher never share one.
    this.key = derivedKey(signingSecret, 'audio-share secret box v1');
  }

  seal(plain: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, nonce.toString('base64url'), sealed.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const [version, nonce, body, tag] = sealed.split('.');
    if (version !== VERSION || !nonce || body === undefined || !tag) throw new Error('A sealed secret is not in a form this server knows.');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonce, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}
