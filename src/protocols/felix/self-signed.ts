// A self-signed certificate for `localhost`, made at start when no certificate is configured
// (notes §7: the reference broker does the same, with a warning). An ECDSA P-256 key from
// node:crypto and an X.509 v3 certificate assembled here in DER (node can sign but not build
// certificates): subject and issuer CN=localhost, subjectAltName DNS:localhost, IP 127.0.0.1 and
// ::1, no CA flag (rustls refuses a CA certificate as a server's own). Clients trust it by
// taking the PEM as their CA.

import { createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';

export interface CertificatePair {
  /** The certificate, PEM. */
  cert: string;
  /** The private key, PKCS#8 PEM. */
  key: string;
}

/** One DER element: tag, definite length, content. */
function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else if (n < 0x100) len = Buffer.from([0x81, n]);
  else if (n < 0x10000) len = Buffer.from([0x82, n >> 8, n & 0xff]);
  else throw new RangeError(`DER element of ${n} bytes`);
  return Buffer.concat([Buffer.from([tag]), len, body]);
}

const seq = (...c: Buffer[]): Buffer => der(0x30, ...c);

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const bytes = [parts[0]! * 40 + parts[1]!];
  for (const p of parts.slice(2)) {
    const stack = [p & 0x7f];
    for (let v = p >>> 7; v > 0; v >>>= 7) stack.unshift((v & 0x7f) | 0x80);
    bytes.push(...stack);
  }
  return der(0x06, Buffer.from(bytes));
}

function utcTime(d: Date): Buffer {
  const p = (n: number): string => String(n).padStart(2, '0');
  const s = `${p(d.getUTCFullYear() % 100)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  return der(0x17, Buffer.from(s, 'ascii'));
}

function commonName(cn: string): Buffer {
  return seq(der(0x31, seq(oid('2.5.4.3'), der(0x0c, Buffer.from(cn, 'utf8')))));
}

function pem(label: string, body: Buffer): string {
  const lines = body.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

const ecdsaWithSha256 = seq(oid('1.2.840.10045.4.3.2'));

/** A new key and a certificate for localhost valid from an hour ago for `days` days. */
export function selfSignedLocalhost(days = 365, now = new Date()): CertificatePair {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  const name = commonName('localhost');
  const notBefore = new Date(now.getTime() - 3_600_000);
  const notAfter = new Date(now.getTime() + days * 86_400_000);
  const altNames = seq(der(0x82, Buffer.from('localhost', 'ascii')), der(0x87, Buffer.from([127, 0, 0, 1])), der(0x87, Buffer.concat([Buffer.alloc(15), Buffer.from([1])])));
  const extensions = der(0xa3, seq(seq(oid('2.5.29.17'), der(0x04, altNames))));
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, serial),
    ecdsaWithSha256,
    name,
    seq(utcTime(notBefore), utcTime(notAfter)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions,
  );
  const signature = sign('sha256', tbs, privateKey);
  const certificate = seq(tbs, ecdsaWithSha256, der(0x03, Buffer.from([0]), signature));
  return { cert: pem('CERTIFICATE', certificate), key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** Whether a PEM pair is a certificate and the private key of its public key. */
export function certificateMatchesKey(pair: CertificatePair): boolean {
  return new X509Certificate(pair.cert).checkPrivateKey(createPrivateKey(pair.key));
}
