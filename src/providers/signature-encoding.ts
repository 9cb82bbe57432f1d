// Strict decoding of signatures received in headers. Node's Buffer decoders skip invalid
// characters, so "abcXYZ" would decode as hex "abc"; we refuse such text outright.

/** How a scheme writes its digest in a header. */
export type SignatureEncoding = 'hex' | 'base64';

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
// Standard base64 with optional padding; base64url is accepted too, as some senders use it.
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** The bytes `text` encodes, or null when it is not valid in `encoding`. */
export function decodeSignature(text: string, encoding: SignatureEncoding): Buffer | null {
  if (encoding === 'hex') return HEX.test(text) ? Buffer.from(text, 'hex') : null;
  if (!BASE64.test(text) || text.replace(/=+$/, '').length % 4 === 1) return null;
  return Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64');
}
