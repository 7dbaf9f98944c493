import type { TargetedKeyboardEvent } from 'preact';
import { useId, useState } from 'preact/hooks';

/*
 * A bar chart in plain SVG (no chart library), with its numbers also in a table beside it. The chart
 * itself is readable without the table: both axes are labelled (the value axis with ticks), every bar
 * is an image named "<label>, <measure>: <value>", and the bars are one Tab stop whose arrow keys move
 * from bar to bar (a roving tabindex), so a keyboard or a screen reader goes through them one by one.
 */

export interface Bar {
  label: string;
  value: number;
}

export interface BarChartProps {
  bars: Bar[];
  /** What the chart shows, e.g. "Reads per group, busiest first": the chart's name. */
  title: string;
  /** What the value axis counts, e.g. "Reads". */
  valueAxis: string;
  /** What each bar stands for, e.g. "Group" or "Day (UTC)". */
  categoryAxis: string;
  /**
   * `rows`: one labelled row per bar, values along the bottom (groups: every name written out);
   * `columns`: bars side by side over time, some of them labelled (days).
   */
  layout: 'rows' | 'columns';
}

const WIDTH = 720;
const FONT = 12;
/** A name longer than this many characters is cut on its row (the bar's name and tooltip keep it whole). */
const LABEL_CHARS = 28;

/** Up to about five round steps (1, 2 or 5 times a power of ten) from 0 to at least `max`; counts are whole. */
function valueTicks(max: number): number[] {
  const rough = Math.max(1, max) / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(
    1,
    [1, 2, 5].map((factor) => factor * power).find((candidate) => candidate >= rough) ?? 10 * power,
  );
  const top = Math.max(step, Math.ceil(max / step) * step);
  return Array.from({ length: top / step + 1 }, (_, index) => index * step);
}

const format = (value: number) => value.toLocaleString('en-US');

const shorten = (label: string) => {
  const characters = Array.from(label);
  return characters.length > LABEL_CHARS ? `${characters.slice(0, LABEL_CHARS - 1).join('')}…` : label;
};

/** Bars in order (busiest group or oldest day first), scaled to the value axis's last tick. */
export function BarChart({ bars, title, valueAxis, categoryAxis, layout }: BarChartProps) {
  const captionId = useId();
  const [current, setCurrent] = useState(0);
  const ticks = valueTicks(Math.max(0, ...bars.map((bar) => bar.value)));
  const top = ticks.at(-1) ?? 1;
  const measure = valueAxis.toLowerCase();
  const name = (bar: Bar) => `${bar.label}, ${measure}: ${format(bar.value)}`;
  const focusable = Math.min(current, bars.length - 1);

  /** Arrow keys, Home and End move the focus from bar to bar; Tab leaves the chart. */
  const onKeyDown = (event: TargetedKeyboardEvent<SVGSVGElement>) => {
    const moves: Record<string, number> = {
      ArrowRight: focusable + 1,
      ArrowDown: focusable + 1,
      ArrowLeft: focusable - 1,
      ArrowUp: focusable - 1,
      Home: 0,
      End: bars.length - 1,
    };
    const next = moves[event.key];
    if (next === undefined) return;
    event.preventDefault();
    const index = Math.max(0, Math.min(bars.length - 1, next));
    setCurrent(index);
    event.currentTarget.querySelectorAll<SVGGElement>('.usage-bar')[index]?.focus();
  };

  const drawing = layout === 'rows' ? rowsLayout(bars.length) : columnsLayout(bars.length);
  const { plot } = drawing;
  const scale = (value: number) => (value / top) * (layout === 'rows' ? plot.width : plot.height);

  return (
    <figure class={`usage-chart usage-chart-${layout}`}>
      <svg
        viewBox={`0 0 ${WIDTH} ${drawing.height}`}
        role="group"
        aria-label={title}
        aria-describedby={captionId}
        onKeyDown={onKeyDown}
      >
        {/* The axes are drawn for the eye; the caption says the same in words. */}
        <g aria-hidden="true" class="usage-axes">
          {ticks.map((tick) => {
            const at = scale(tick);
            return layout === 'rows' ? (
              <g key={tick}>
                <line class="usage-grid" x1={plot.x + at} x2={plot.x + at} y1={plot.y} y2={plot.y + plot.height} />
                <text class="usage-tick" x={plot.x + at} y={plot.y + plot.height + FONT + 6} text-anchor="middle">
                  {format(tick)}
                </text>
              </g>
            ) : (
              <g key={tick}>
                <line
                  class="usage-grid"
                  x1={plot.x}
                  x2={plot.x + plot.width}
                  y1={plot.y + plot.height - at}
                  y2={plot.y + plot.height - at}
                />
                <text class="usage-tick" x={plot.x - 6} y={plot.y + plot.height - at + FONT / 3} text-anchor="end">
                  {format(tick)}
                </text>
              </g>
            );
          })}
          <line class="usage-axis" x1={plot.x} x2={plot.x} y1={plot.y} y2={plot.y + plot.height} />
          <line
            class="usage-axis"
            x1={plot.x}
            x2={plot.x + plot.width}
            y1={plot.y + plot.height}
            y2={plot.y + plot.height}
          />
          {layout === 'rows' ? (
            <>
              <text class="usage-axis-title" x={plot.x - 8} y={FONT + 2} text-anchor="end">
                {categoryAxis}
              </text>
              <text class="usage-axis-title" x={plot.x + plot.width / 2} y={drawing.height - 4} text-anchor="middle">
                {valueAxis}
              </text>
            </>
          ) : (
            <>
              <text class="usage-axis-title" x={plot.x} y={FONT + 2} text-anchor="start">
                {valueAxis}
              </text>
              <text class="usage-axis-title" x={plot.x + plot.width / 2} y={drawing.height - 4} text-anchor="middle">
                {categoryAxis}
              </text>
              {bars.map((bar, index) =>
                drawing.labelled(index) ? (
                  <text
                    key={index}
                    class="usage-tick"
                    x={plot.x + drawing.band * (index + 0.5)}
                    y={plot.y + plot.height + FONT + 6}
                    text-anchor="middle"
                  >
                    {bar.label}
                  </text>
                ) : null,
              )}
            </>
          )}
        </g>
        {bars.map((bar, index) => {
          const length = scale(bar.value);
          const band = drawing.band;
          const box =
            layout === 'rows'
              ? { x: plot.x, y: plot.y + band * index, width: plot.width, height: band }
              : { x: plot.x + band * index, y: plot.y, width: band, height: plot.height };
          return (
            <g
              key={index}
              class="usage-bar"
              role="img"
              aria-label={name(bar)}
              tabIndex={index === focusable ? 0 : -1}
              onFocus={() => setCurrent(index)}
            >
              <title>{name(bar)}</title>
              <rect class="usage-bar-band" {...box} />
              {layout === 'rows' ? (
                <>
                  <text class="usage-bar-label" x={plot.x - 8} y={box.y + band / 2 + FONT / 3} text-anchor="end">
                    {shorten(bar.label)}
                  </text>
                  <rect class="usage-bar-fill" x={plot.x} y={box.y + 4} width={length} height={band - 8} />
                  <text class="usage-bar-value" x={plot.x + length + 6} y={box.y + band / 2 + FONT / 3}>
                    {format(bar.value)}
                  </text>
                </>
              ) : (
                <>
                  <rect
                    class="usage-bar-fill"
                    x={box.x + 1}
                    y={plot.y + plot.height - length}
                    width={Math.max(1, band - 2)}
                    height={length}
                  />
                  <text
                    class="usage-bar-value usage-bar-value-on-focus"
                    x={box.x + band / 2}
                    y={plot.y + plot.height - length - 4}
                    text-anchor="middle"
                  >
                    {format(bar.value)}
                  </text>
                </>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption id={captionId} class="muted">
        {title}.{' '}
        {layout === 'rows'
          ? `${categoryAxis} down the side, ${measure} along the bottom from 0 to ${format(top)}.`
          : `${valueAxis} up the side from 0 to ${format(top)}, ${categoryAxis} along the bottom.`}{' '}
        Tab to the bars, then the arrow keys move from one to the next. The numbers are also in the table below.
      </figcaption>
    </figure>
  );
}

/** Rows of 26 units under a header line, the names in a 200-unit column, the tick labels and the axis name below. */
function rowsLayout(count: number) {
  const band = 26;
  const plot = { x: 208, y: FONT + 10, width: WIDTH - 208 - 64, height: band * Math.max(1, count) };
  return { plot, band, height: plot.y + plot.height + 2 * FONT + 20, labelled: () => true };
}

/** Columns over a 180-unit plot, the value axis's ticks on the left; about six of the bars named below. */
function columnsLayout(count: number) {
  // 40 units on the right: the last bar's label (a day, centred on it) stays inside.
  const plot = { x: 48, y: FONT + 14, width: WIDTH - 48 - 40, height: 180 };
  const every = Math.max(1, Math.ceil(count / 6));
  return {
    plot,
    band: plot.width / Math.max(1, count),
    height: plot.y + plot.height + 2 * FONT + 20,
    // The last bar (today) always, then every `every` bars back from it.
    labelled: (index: number) => (count - 1 - index) % every === 0,
  };
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
