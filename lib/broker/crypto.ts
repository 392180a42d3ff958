import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { config } from '@/lib/config.mjs';
import { stringifyExact } from '@/lib/exact-json';

/** The stored form of an encrypted payload (Queen MQ's envelope): AES-256-GCM, base64 fields. */
export interface Envelope {
  encrypted: string;
  iv: string;
  authTag: string;
}

function key(): Buffer {
  const k = config().encryptionKey;
  if (!k) throw new Error('QUEEN_ENCRYPTION_KEY is not set, so encrypted payloads cannot be read or written');
  return k;
}

export function encryptPayload(payload: unknown): Envelope {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key(), iv);
  const encrypted = Buffer.concat([cipher.update(stringifyExact(payload), 'utf8'), cipher.final()]);
  return {
    encrypted: encrypted.toString('base64'),
    iv: iv.toString('base64'),
    authTag: cipher.getAuthTag().toString('base64'),
  };
}

/** The payload's JSON text, from the stored envelope's JSON text. */
export function decryptPayload(envelopeJson: string): string {
  const e = JSON.parse(envelopeJson) as Envelope;
  const decipher = createDecipheriv('aes-256-gcm', key(), Buffer.from(e.iv, 'base64'));
  decipher.setAuthTag(Buffer.from(e.authTag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(e.encrypted, 'base64')), decipher.final()]).toString('utf8');
}

/** A stored payload as JSON text for the wire, decrypted when it was encrypted. */
export const payloadText = (stored: string, encrypted: boolean) => (encrypted ? decryptPayload(stored) : stored);
