import { useEffect, useState } from 'preact/hooks';
import { Alert, Loading, PageHeader, Select, TextField } from '../components/ui';
import { BarChart, UsageTable } from '../components/usage-chart';
import { useConsole, useLoad } from '../hooks';
import { BASE } from '../router';
import { given, ugs } from '../service';

type Metric = 'verifications' | 'reads' | 'embed_tokens_minted';

const METRICS: ReadonlyArray<readonly [Metric, string]> = [
  ['verifications', 'Verifications'],
  ['reads', 'Reads of an existing group'],
  ['embed_tokens_minted', 'Embed tokens minted'],
];

/** Each metric's name on the chart's value axis and in each bar's name. */
const AXIS_NAMES: Record<Metric, string> = {
  verifications: 'Verifications',
  reads: 'Reads',
  embed_tokens_minted: 'Embed tokens minted',
};

/** The busiest groups of the environment over a chosen period (docs/api.md#usage-per-group). */
export function UsageScreen() {
  const { environment } = useConsole();
  const initial = { since: '', until: '', metric: 'verifications' as Metric };
  const [draft, setDraft] = useState(initial);
  const [filters, setFilters] = useState(initial);
  const top = useLoad(
    () =>
      ugs.getTopUsage({
        environment,
        since: given(filters.since),
        until: given(filters.until),
        metric: filters.metric,
        limit: '20',
      }),
    [filters, environment],
  );
  // The date fields show the range the answer covers, the defaults included (the server's today and the
  // 29 days before it), rather than staying empty while the heading names a range.
  useEffect(() => {
    const range = top.data;
    if (range) setDraft((previous) => ({ ...previous, since: range.since, until: range.until }));
  }, [top.data]);
  const metricName = METRICS.find(([metric]) => metric === filters.metric)![1];
  return (
    <>
      <PageHeader title="Usage" />
      <form
        class="card filters"
        aria-label="Choose the period and the measure"
        onSubmit={(event) => {
          event.preventDefault();
          setFilters({ ...draft });
        }}
      >
        <TextField
          label="From (UTC day)"
          type="date"
          value={draft.since}
          onValue={(since) => setDraft({ ...draft, since })}
        />
        <TextField
          label="To (UTC day)"
          type="date"
          value={draft.until}
          onValue={(until) => setDraft({ ...draft, until })}
        />
        <Select
          label="Busiest by"
          value={draft.metric}
          options={METRICS}
          onValue={(metric) => setDraft({ ...draft, metric })}
        />
        <div class="filters-submit">
          <button type="submit">Show</button>
        </div>
      </form>
      {top.error && <Alert>{top.error.message}</Alert>}
      {top.loading && !top.data && <Loading what="usage" />}
      {top.data && (
        <section class="card" aria-label="The busiest groups">
          <h2>
            Busiest groups by {metricName.toLowerCase()}, {top.data.since} to {top.data.until}
          </h2>
          {top.data.user_groups.length === 0 ? (
            <p class="muted">Nothing was counted in this period.</p>
          ) : (
            <>
              <BarChart
                layout="rows"
                title={`${AXIS_NAMES[top.data.metric]} per group, busiest first`}
                valueAxis={AXIS_NAMES[top.data.metric]}
                categoryAxis="Group"
                bars={top.data.user_groups.map((group) => ({
                  label: group.name || group.user_group_id,
                  value: group[top.data!.metric],
                }))}
              />
              <UsageTable
                caption={`Usage of the busiest groups, ${top.data.since} to ${top.data.until}`}
                labelHeading="Group"
                rows={top.data.user_groups.map((group) => ({
                  key: String(group.team_id),
                  label: <a href={`${BASE}/groups/${group.team_id}`}>{group.name}</a>,
                  embed_tokens_minted: group.embed_tokens_minted,
                  verifications: group.verifications,
                  reads: group.reads,
                }))}
              />
            </>
          )}
        </section>
      )}
    </>
  );
}

/** One group's last 30 days, for its page. */
export function GroupUsage({ teamId }: { teamId: number }) {
  const { environment } = useConsole();
  const usage = useLoad(() => ugs.getUsage({ team_id: String(teamId), environment }), [teamId, environment]);
  if (usage.error) return <Alert>{usage.error.message}</Alert>;
  if (!usage.data) return <Loading what="usage" />;
  const { days, since, until } = usage.data;
  return (
    <>
      <BarChart
        layout="columns"
        title={`Verifications per day, ${since} to ${until}`}
        valueAxis="Verifications"
        categoryAxis="Day (UTC)"
        bars={days.map((day) => ({ label: day.day, value: day.verifications }))}
      />
      <details>
        <summary>The numbers, day by day</summary>
        <UsageTable
          caption={`Usage per UTC day, ${since} to ${until}`}
          labelHeading="Day"
          rows={days.map((day) => ({ key: day.day, label: day.day, ...day }))}
        />
      </details>
    </>
  );
}
