import { Counter, Registry } from 'prom-client';
import type { EmbedTokenService } from '../domain/embed-tokens/embed-tokens.service.js';
import type { EmbedTokenRevocationService } from '../domain/embed-tokens/embed-token-revocations.service.js';
import type { EmbedTokenLifecycleService } from '../domain/embed-tokens/embed-token-introspection.service.js';

/**
 * `ugs_embed_token_signature_checks_total`: the ES256 signatures of embed tokens this process has
 * checked (online verification). Each costs some 50 µs of CPU, and only an admitted request pays it:
 * a call refused by its rate limit or for its API token checks none. Read from the service when
 * scraped, so the verification itself only adds one to a number.
 */
export function embedTokenMetrics(
  embedTokens: Pick<EmbedTokenService, 'signatureChecks'>,
  revocations?: Pick<EmbedTokenRevocationService, 'counts'>,
  lifecycle?: Pick<EmbedTokenLifecycleService, 'counts'>,
): Registry {
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
  if (revocations) {
    // What the revocation routes cost and did: a document rendered (its entries read and written out:
    // the costly part, once per change of them per process), served from memory, or answered 304; and
    // the explicit revokes this process made.
    new Counter({
      name: 'ugs_embed_token_revocation_documents_total',
      help: 'Revocation documents served, by how: rendered (entries read), cached (served again), not_modified (304).',
      labelNames: ['how'],
      registers: [registry],
      collect() {
        this.reset();
        const { rendered, cached, notModified } = revocations.counts();
        this.inc({ how: 'rendered' }, rendered);
        this.inc({ how: 'cached' }, cached);
        this.inc({ how: 'not_modified' }, notModified);
      },
    });
    new Counter({
      name: 'ugs_embed_token_revocations_total',
      help: 'Explicit revokes made by this process (POST /api/user/embed_token/revoke, ugs embed-tokens revoke), by scope.',
      labelNames: ['scope'],
      registers: [registry],
      collect() {
        this.reset();
        const { tokens, groups } = revocations.counts();
        this.inc({ scope: 'token' }, tokens);
        this.inc({ scope: 'group' }, groups);
      },
    });
  }
  if (lifecycle) lifecycleMetrics(registry, lifecycle);
  return registry;
}

/**
 * The lifecycle beyond minting (docs/api.md#introspection-rfc-7662), this process's figures read when scraped:
 * `ugs_embed_token_introspections_total{active}`, `ugs_embed_tokens_consumed_total` (single-use tokens
 * this process consumed first), `ugs_embed_token_consumptions_refused_total` (checks of a token consumed
 * already, by anyone), `ugs_embed_token_refreshes_total` (tokens a session refreshed).
 */
function lifecycleMetrics(registry: Registry, lifecycle: Pick<EmbedTokenLifecycleService, 'counts'>): void {
  new Counter({
    name: 'ugs_embed_token_introspections_total',
    help: 'Embed token introspections (RFC 7662) answered, by whether the token was active.',
    labelNames: ['active'],
    registers: [registry],
    collect() {
      const counts = lifecycle.counts();
      this.reset();
      this.inc({ active: 'true' }, counts.active);
      this.inc({ active: 'false' }, counts.inactive);
    },
  });
  const figures = [
    ['ugs_embed_tokens_consumed_total', 'Single-use embed tokens this process consumed first.', 'consumed'],
    [
      'ugs_embed_token_consumptions_refused_total',
      'Online checks of a single-use embed token consumed already (by another caller or key).',
      'consumptionsRefused',
    ],
    ['ugs_embed_token_refreshes_total', 'Embed tokens refreshed within their session.', 'refreshed'],
  ] as const;
  for (const [name, help, figure] of figures)
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(lifecycle.counts()[figure]);
      },
    });
}
