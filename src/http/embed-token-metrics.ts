import { Counter, Registry } from 'prom-client';
import type { EmbedTokenService } from '../domain/embed-tokens/embed-tokens.service.js';

/**
 * `ugs_embed_token_signature_checks_total`: the ES256 signatures of embed tokens this process has
 * checked (online verification). Each costs some 50 µs of CPU, and only an admitted request pays it:
 * a call refused by its rate limit or for its API token checks none. Read from the service when
 * scraped, so the verification itself only adds one to a number.
 */
export function embedTokenMetrics(embedTokens: Pick<EmbedTokenService, 'signatureChecks'>): Registry {
  const registry = new Registry();
  new Counter({
    name: 'ugs_embed_token_signature_checks_total',
    help: 'Embed token signatures checked (POST /api/user/verify); refused calls check none.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(embedTokens.signatureChecks());
    },
  });
  return registry;
}
