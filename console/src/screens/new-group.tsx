import { useState } from 'preact/hooks';
import { GROUP_FIELDS, GroupFields, groupDraft, groupFields } from '../components/group-form';
import { Alert, PageHeader, Section, TextField } from '../components/ui';
import { useConsole, useSubmit } from '../hooks';
import { navigate } from '../router';
import { ugs } from '../service';

/** Create a group with get-or-create (GET /api/user, fields in the query string: fetch sends no GET body). */
export function NewGroupScreen() {
  const { token, announce } = useConsole();
  const [id, setId] = useState('');
  const [draft, setDraft] = useState(groupDraft());
  const { errors, failure, busy, run, setErrors } = useSubmit();
  const create = async (event: Event) => {
    event.preventDefault();
    const fields = groupFields(draft);
    if ('errors' in fields) return setErrors(fields.errors);
    const { name, properties, mapping, ...rest } = fields.body;
    const created = await run(
      () =>
        ugs.getOrCreateUserGroup({
          ...rest,
          user_group_id: id,
          ...(name === '' ? {} : { name }),
          ...(properties === null ? {} : { properties }),
          // The form gives {} for no mapping; null (which clears on update) is not a creation's.
          ...(mapping === null || mapping === undefined ? {} : { mapping }),
        }),
      GROUP_FIELDS,
    );
    if (!created) return;
    navigate(`/groups/${created.userGroup.team_id}`);
    announce(
      created.newUserGroup
        ? `Created ${created.userGroup.provided_id}.`
        : `${created.userGroup.provided_id} already existed; nothing was changed.`,
    );
  };
  return (
    <>
      <PageHeader title="New user group" />
      <Section title={`In ${token.environment}`}>
        {failure && <Alert>{failure}</Alert>}
        <form onSubmit={(event) => void create(event)}>
          <TextField
            label="User group id"
            name="user_group_id"
            required
            hint="Your own id for the group; the name defaults to it."
            value={id}
            error={errors.user_group_id}
            onValue={setId}
          />
          <GroupFields draft={draft} onDraft={setDraft} errors={errors} />
          <button type="submit" disabled={busy}>
            Create
          </button>
        </form>
      </Section>
    </>
  );
}
