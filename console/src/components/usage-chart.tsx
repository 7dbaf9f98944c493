import { useId } from 'preact/hooks';

/*
 * A bar chart in plain SVG (no chart library) with its numbers in a table beside it: the picture is
 * for the eye (aria-hidden), the table for the keyboard and screen readers, so nothing of the chart
 * is only visual.
 */

export interface Bar {
  label: string;
  value: number;
}

const WIDTH = 640;
const HEIGHT = 180;
const GAP = 2;

/** Bars in order (oldest day or busiest group first), scaled to the largest value. */
export function BarChart({ bars, describe }: { bars: Bar[]; describe: string }) {
  const max = Math.max(1, ...bars.map((bar) => bar.value));
  const width = bars.length === 0 ? WIDTH : WIDTH / bars.length;
  return (
    <figure class="usage-chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT + 1}`} preserveAspectRatio="none" aria-hidden="true" focusable="false">
        <line x1="0" y1={HEIGHT} x2={WIDTH} y2={HEIGHT} class="usage-axis" />
        {bars.map((bar, index) => {
          const height = (bar.value / max) * HEIGHT;
          return (
            <rect
              key={bar.label}
              class="usage-bar"
              x={index * width + GAP / 2}
              y={HEIGHT - height}
              width={Math.max(1, width - GAP)}
              height={height}
            >
              <title>{`${bar.label}: ${bar.value}`}</title>
            </rect>
          );
        })}
      </svg>
      <figcaption class="muted">
        {describe}; highest {max === 1 && bars.every((bar) => bar.value === 0) ? 0 : max}. The numbers are in the table
        below.
      </figcaption>
    </figure>
  );
}

export interface UsageRow {
  key: string;
  label: preact.ComponentChildren;
  embed_tokens_minted: number;
  verifications: number;
  reads: number;
}

/** The chart's numbers: one row per bar, every metric. */
export function UsageTable({
  caption,
  rows,
  labelHeading,
}: {
  caption: string;
  rows: UsageRow[];
  labelHeading: string;
}) {
  const id = useId();
  return (
    <div class="table-scroll" role="region" aria-labelledby={id} tabIndex={0}>
      <table>
        <caption id={id}>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{labelHeading}</th>
            <th scope="col">Embed tokens minted</th>
            <th scope="col">Verifications</th>
            <th scope="col">Reads</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key}>
              <th scope="row">{row.label}</th>
              <td>{row.embed_tokens_minted}</td>
              <td>{row.verifications}</td>
              <td>{row.reads}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
