import type { WebhookEventRecord } from '../domain/webhook-endpoints/webhook.records.js';
import { userGroupFieldsView } from '../domain/user-groups/user-group.view.js';
import { toApiToken } from '../wire/api-token.presenter.js';
import { toSigningKey } from '../wire/signing-key.presenter.js';
import { presentUserGroupFields } from '../wire/user-group.presenter.js';

/** The object an event concerns, as the API shows it (without any token), under its singular name. */
function dataOf(event: WebhookEventRecord): Record<string, unknown> {
  const { subject } = event;
  switch (subject.kind) {
    case 'user_group': {
      const userGroup = presentUserGroupFields(userGroupFieldsView(subject.userGroup));
      return event.type === 'user_group.updated'
        ? { user_group: userGroup, changes: event.changes ?? {} }
        : { user_group: userGroup };
    }
    case 'api_token':
      return { api_token: toApiToken(subject.apiToken) };
    case 'signing_key': {
      const { signingKey } = subject;
      // The key that took over: current, so published with no end.
      return {
        signing_key: toSigningKey({ ...signingKey, retiredAt: null, publishedUntil: null }),
        changes: { kid: { before: subject.retiredKid, after: signingKey.kid } },
      };
    }
  }
}

/** The request body of every attempt of an event (docs/api.md#webhooks): the same bytes each time. */
export function webhookPayload(event: WebhookEventRecord, workspaceName: string): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    created_at: event.createdAt,
    workspace: workspaceName,
    environment: event.environment,
    // A change made by a sync (docs/api.md#sync-tenants-as-code) names it.
    ...(event.syncId === undefined ? {} : { sync_id: event.syncId }),
    data: dataOf(event),
  });
}
