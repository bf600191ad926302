/**
 * A software WebAuthn authenticator for the API's tests, with the browser's
 * part of the ceremonies: it answers the options the server gives as
 * `navigator.credentials.create()` / `.get()` would, with real ES256 keys,
 * "none" attestation and discoverable credentials (WebAuthn Level 3, §6.1
 * authenticator data, §6.5 attestation object, §5.8.1 client data). The
 * Chromium tests use the browser's own virtual authenticator instead; this
 * one lets the tests on each store run without a browser and forge what a
 * browser never would (another origin, a replay, a counter gone back).
 */
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

type Json = Record<string, unknown>;

export interface SoftCredential {
  id: string;
  rpId: string;
  userHandle: string;
  privateKey: KeyObject;
  counter: number;
}

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();
const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

// §6.1 flags: user present, user verified, backup eligible, backed up, attested credential data included.
const UP = 0x01;
const UV = 0x04;
const BE = 0x08;
const BS = 0x10;
const AT = 0x40;

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];
  /** The origin the "browser" reports in clientDataJSON. */
  origin: string;
  /** Whether its signature counter moves (hardware keys) or stays 0 (synced passkeys). */
  counts: boolean;

  constructor(origin: string, { counts = true }: { counts?: boolean } = {}) {
    this.origin = origin;
    this.counts = counts;
  }

  private authenticatorData(rpId: string, counter: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    const flags = UP | UV | BE | BS | (attested ? AT : 0);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  /**
   * navigator.credentials.create(): a new ES256 credential for the options'
   * relying party and user. With `again`, attests that credential once more
   * instead (what no honest authenticator does: a hostile client's replay of
   * a credential another account holds).
   */
  create(options: Json, again?: SoftCredential): Json {
    const rp = options.rp as { id: string };
    const user = options.user as { id: string };
    const excluded = ((options.excludeCredentials as Array<{ id: string }> | undefined) ?? []).map((credential) => credential.id);
    if (!again && this.credentials.some((credential) => excluded.includes(credential.id))) throw new Error('InvalidStateError: this authenticator holds an excluded credential');
    const privateKey = again?.privateKey ?? generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const publicKey = createPublicKey(privateKey);
    const jwk = publicKey.export({ format: 'jwk' });
    // COSE_Key (RFC 9052 §7, RFC 9053 §7.1.1): kty EC2 (2), alg ES256 (-7), crv P-256 (1), x, y.
    const coseKey = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
        [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
      ]),
    );
    const credentialId = again ? Buffer.from(again.id, 'base64url') : randomBytes(32);
    const length = Buffer.alloc(2);
    length.writeUInt16BE(credentialId.length);
    // §6.5.1 attested credential data: AAGUID (zeros for "none"), credential id length, id, public key.
    const attested = Buffer.concat([Buffer.alloc(16), length, credentialId, Buffer.from(coseKey)]);
    const credential: SoftCredential = { id: b64url(credentialId), rpId: rp.id, userHandle: user.id, privateKey, counter: 0 };
    const authData = this.authenticatorData(rp.id, credential.counter, attested);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Map<string, string> | Uint8Array>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, string>()],
        ['authData', new Uint8Array(authData)],
      ]),
    );
    if (!again) this.credentials.push(credential);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: { clientDataJSON: b64url(this.clientData('webauthn.create', options.challenge as string)), attestationObject: b64url(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** navigator.credentials.get(): an assertion by `credential` (by default the newest for the options' relying party). */
  get(options: Json, credential = this.credentials.findLast((held) => held.rpId === options.rpId)): Json {
    if (!credential) throw new Error(`NotAllowedError: no credential for ${String(options.rpId)}`);
    if (this.counts) credential.counter += 1;
    const authData = this.authenticatorData(credential.rpId, credential.counter);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge as string);
    // §6.3.3 step 11: the signature is over authenticatorData ‖ SHA-256(clientDataJSON); ES256 signatures are DER.
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), credential.privateKey);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: { clientDataJSON: b64url(clientDataJSON), authenticatorData: b64url(authData), signature: b64url(signature), userHandle: credential.userHandle },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
