import { Checkbox, TextArea, TextField } from './ui';
import type { UpdateUserGroupBody, UserGroup } from '../types';

/** The editable fields of a group as the form holds them: text, until the form is sent. */
export interface GroupDraft {
  name: string;
  parent: string;
  tags: string;
  isDemoGroup: boolean;
  properties: string;
  mapping: string;
  accessRules: string;
}

/** The fields the API may name in an error, so that the form shows it at that field. */
export const GROUP_FIELDS = [
  'user_group_id',
  'name',
  'parent_user_group_id',
  'tags',
  'is_demo_group',
  'properties',
  'mapping',
  'access_rules',
] as const;

export function groupDraft(group?: UserGroup): GroupDraft {
  return {
    name: group?.name ?? '',
    parent: group?.parent_user_group_id ?? '',
    tags: group?.tags.join(', ') ?? '',
    isDemoGroup: group?.is_demo_group ?? false,
    properties: group?.properties ? JSON.stringify(group.properties, null, 2) : '',
    mapping: group && Object.keys(group.mapping).length > 0 ? JSON.stringify(group.mapping, null, 2) : '',
    accessRules: group && group.access_rules.length > 0 ? JSON.stringify(group.access_rules, null, 2) : '',
  };
}

function parsed(text: string, field: string): { value: unknown } | { error: [string, string] } {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { error: [field, 'This is not valid JSON.'] };
  }
}

/** What the form sends: the operator's JSON goes as it is, and the API's validation is its check. */
export type GroupBody = Omit<UpdateUserGroupBody, 'user_group_id' | 'new_user_group_id'>;

/**
 * The request fields of a draft: every field, since PUT replaces properties, mapping and tags whole
 * and an unchanged value changes nothing. Text that is not JSON is refused here, at its field; every
 * other rule is the API's, whose errors the form shows where they belong.
 */
export function groupFields(draft: GroupDraft): { body: GroupBody } | { errors: Record<string, string> } {
  const properties = draft.properties.trim() === '' ? { value: null } : parsed(draft.properties, 'properties');
  const mapping = draft.mapping.trim() === '' ? { value: {} } : parsed(draft.mapping, 'mapping');
  const accessRules = draft.accessRules.trim() === '' ? { value: null } : parsed(draft.accessRules, 'access_rules');
  const errors = Object.fromEntries(
    [properties, mapping, accessRules].flatMap((result) => ('error' in result ? [result.error] : [])),
  );
  if (Object.keys(errors).length > 0) return { errors };
  return {
    body: {
      name: draft.name,
      parent_user_group_id: draft.parent.trim() === '' ? null : draft.parent.trim(),
      tags: draft.tags
        .split(',')
        .map((tag) => tag.trim())
        .filter((tag) => tag !== ''),
      is_demo_group: draft.isDemoGroup,
      properties: (properties as { value: GroupBody['properties'] }).value,
      mapping: (mapping as { value: GroupBody['mapping'] }).value,
      access_rules: (accessRules as { value: GroupBody['access_rules'] }).value,
    },
  };
}

export function GroupFields({
  draft,
  onDraft,
  errors,
}: {
  draft: GroupDraft;
  onDraft(draft: GroupDraft): void;
  errors: Record<string, string>;
}) {
  const set = (change: Partial<GroupDraft>) => onDraft({ ...draft, ...change });
  return (
    <div class="form-grid">
      <TextField label="Name" name="name" value={draft.name} error={errors.name} onValue={(name) => set({ name })} />
      <TextField
        label="Parent"
        name="parent_user_group_id"
        hint="The user_group_id of the parent group; empty for none."
        value={draft.parent}
        error={errors.parent_user_group_id}
        onValue={(parent) => set({ parent })}
      />
      <TextField
        label="Tags"
        name="tags"
        hint="Comma-separated."
        value={draft.tags}
        error={errors.tags}
        onValue={(tags) => set({ tags })}
      />
      <div class="field">
        <span class="label-like" aria-hidden="true">
          Demo
        </span>
        <Checkbox
          label="Demo group (dashboards show a watermark)"
          checked={draft.isDemoGroup}
          onChecked={(isDemoGroup) => set({ isDemoGroup })}
        />
        {errors.is_demo_group && <p class="field-error">{errors.is_demo_group}</p>}
      </div>
      <TextArea
        label="Properties"
        hint="A JSON object; empty for none."
        value={draft.properties}
        error={errors.properties}
        onValue={(properties) => set({ properties })}
      />
      <TextArea
        label="Mapping"
        hint='Schema id → data source id or provided id, e.g. {"1": "warehouse_eu"}.'
        value={draft.mapping}
        error={errors.mapping}
        onValue={(mapping) => set({ mapping })}
        rows={4}
      />
      <TextArea
        label="Access rules"
        hint={`The group's own rules, a JSON array (empty for none), e.g. [{"schema_id": 1, "table": "orders", "column": "tenant", "op": "eq", "value": {"property": "tenant"}}]. Its ancestors' rules apply too.`}
        value={draft.accessRules}
        error={errors.access_rules}
        onValue={(accessRules) => set({ accessRules })}
        rows={6}
      />
    </div>
  );
}
