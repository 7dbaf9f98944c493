// Embed tokens checked as a renderer elsewhere would: jsonwebtoken (not jose, which signs them)
// against the keys an issuer publishes.
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import jwt from 'jsonwebtoken';

export interface Jwk extends JsonWebKey {
  kid: string;
}

/** The token's claims as jsonwebtoken verifies them against the published key its kid names. */
export function independentlyVerified(token: string, keys: Jwk[], options: jwt.VerifyOptions = {}): jwt.JwtPayload {
  const { header } = jwt.decode(token, { complete: true })!;
  const jwk = keys.find((key) => key.kid === header.kid);
  if (!jwk) throw new Error(`kid ${header.kid} is not in the JWKS`);
  const pem = createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
  return jwt.verify(token, pem, { algorithms: ['ES256'], ...options }) as jwt.JwtPayload;
}
