import { useEffect, useId, useRef, useState } from "preact/hooks";
import type { HistoryPoint, UsageDay } from "./api.js";
import { localDate } from "./time.js";
import { isoShort, visible } from "./ui.js";

/**
 * Two hand-drawn SVG charts (no chart library: these two shapes are all the dashboard
 * needs, and a library would be most of the script budget). Colours come from classes in
 * the style sheet (the page's policy allows no inline style). Each chart has a text
 * equivalent: a title and description for screen readers, and the numbers in a table
 * under a disclosure. The bars' days are the service's, UTC days (usage is counted by UTC
 * day), and are labelled so; the score history's times are instants, shown in the browser's
 * zone (time.ts).
 */

const HEIGHT = 220;

/**
 * The figure's width in CSS pixels, followed as it changes: the drawing is made at that
 * width (one unit a pixel), so labels keep their size on a phone instead of shrinking with
 * a scaled picture.
 */
function useWidth(): [preact.RefObject<HTMLDivElement>, number] {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(720);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const measure = () => setWidth(Math.max(280, Math.round(element.getBoundingClientRect().width)));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}
const PAD = { left: 48, right: 12, top: 12, bottom: 28 };

function niceMax(value: number): number {
  if (value <= 4) return 4;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

function dayRange(from: string, to: string): string[] {
  const days: string[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= end && days.length < 400; t += 86_400_000)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

export interface Series {
  id: string;
  label: string;
  /** A class of the style sheet (`s-0` ... `s-7`). */
  tone: string;
}

/** A day's parts, stacked by outcome: allowed, refused and counted, refused and not counted. */
export function outcomeStacks(day: UsageDay | undefined): Record<string, number> {
  if (!day) return {};
  const allowed = day.calls - day.refused;
  const refusedCounted = Math.max(0, day.counted - allowed);
  return { allowed, refused_counted: refusedCounted, refused_free: Math.max(0, day.refused - refusedCounted) };
}

export const OUTCOME_SERIES: Series[] = [
  { id: "allowed", label: "Allowed", tone: "s-0" },
  { id: "refused_counted", label: "Refused, counted", tone: "s-2" },
  { id: "refused_free", label: "Refused, not counted", tone: "s-5" },
];

/** The refusal reasons of the range, most frequent first; beyond six they are summed as "other". */
export function reasonSeries(days: UsageDay[]): Series[] {
  const totals = new Map<string, number>();
  for (const day of days)
    for (const [reason, n] of Object.entries(day.by_reason)) if (reason !== "ok") totals.set(reason, (totals.get(reason) ?? 0) + n);
  const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([reason]) => reason);
  const shown = ranked.slice(0, 6).map((reason, i) => ({ id: reason, label: reason, tone: `s-${i + 1}` }));
  return ranked.length > 6 ? [...shown, { id: "other", label: "other reasons", tone: "s-7" }] : shown;
}

export function reasonStacks(day: UsageDay | undefined, series: Series[]): Record<string, number> {
  if (!day) return {};
  const named = new Set(series.map((s) => s.id));
  const out: Record<string, number> = {};
  for (const [reason, n] of Object.entries(day.by_reason)) {
    if (reason === "ok") continue;
    const id = named.has(reason) ? reason : "other";
    out[id] = (out[id] ?? 0) + n;
  }
  return out;
}

export function StackedBars(props: {
  title: string;
  from: string;
  to: string;
  days: UsageDay[];
  series: Series[];
  stacks: (day: UsageDay | undefined) => Record<string, number>;
}) {
  const titleId = useId();
  const descId = useId();
  const [box, WIDTH] = useWidth();
  const byDay = new Map(props.days.map((d) => [d.day, d]));
  const days = dayRange(props.from, props.to);
  const rows = days.map((day) => ({ day, parts: props.stacks(byDay.get(day)) }));
  const totals = rows.map((r) => props.series.reduce((sum, s) => sum + (r.parts[s.id] ?? 0), 0));
  const max = niceMax(Math.max(0, ...totals));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, days.length);
  const barW = Math.max(1, Math.min(28, slot * 0.72));
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const labelEvery = Math.ceil(days.length / Math.max(2, Math.floor(plotW / 64)));
  const sum = totals.reduce((a, b) => a + b, 0);
  return (
    <figure class="chart">
      <div class="chart-box" ref={box}>
        <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby={`${titleId} ${descId}`} class="bars">
          <title id={titleId}>{props.title}</title>
          <desc id={descId}>
            {`${sum.toLocaleString("en")} in total from ${props.from} to ${props.to} (days in UTC); the busiest day had ${Math.max(0, ...totals).toLocaleString("en")}.`}
          </desc>
          {[0, 0.5, 1].map((f) => (
            <g key={f}>
              <line class="grid" x1={PAD.left} x2={WIDTH - PAD.right} y1={y(max * f)} y2={y(max * f)} />
              <text class="axis" x={PAD.left - 6} y={y(max * f) + 4} text-anchor="end">
                {Math.round(max * f).toLocaleString("en")}
              </text>
            </g>
          ))}
          {rows.map((row, i) => {
            let base = 0;
            const x = PAD.left + i * slot + (slot - barW) / 2;
            return (
              <g key={row.day}>
                <title>{`${row.day}: ${props.series.map((s) => `${s.label} ${row.parts[s.id] ?? 0}`).join(", ")}`}</title>
                {props.series.map((s) => {
                  const value = row.parts[s.id] ?? 0;
                  if (value <= 0) return null;
                  const top = y(base + value);
                  const height = y(base) - top;
                  base += value;
                  return <rect key={s.id} class={s.tone} x={x} y={top} width={barW} height={Math.max(0.5, height)} />;
                })}
                {i % labelEvery === 0 ? (
                  <text class="axis" x={x + barW / 2} y={HEIGHT - 8} text-anchor="middle">
                    {row.day.slice(5)}
                  </text>
                ) : null}
              </g>
            );
          })}
        </svg>
      </div>
      <figcaption>
        <ul class="legend">
          {props.series.map((s) => (
            <li key={s.id}>
              <span class={`swatch ${s.tone}`} aria-hidden="true" />
              {visible(s.label)}
            </li>
          ))}
        </ul>
        <p class="hint">Days in UTC, as the service counts them.</p>
        <details>
          <summary>The numbers</summary>
          {/* biome-ignore lint/a11y/useSemanticElements: a scrollable region must be reachable by keyboard (axe scrollable-region-focusable) */}
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: the same region, focusable so it can be scrolled by keyboard */}
          <div class="table-wrap" role="region" aria-label={`${props.title}: numbers`} tabIndex={0}>
            <table class="numbers">
              <thead>
                <tr>
                  <th scope="col">Day (UTC)</th>
                  {props.series.map((s) => (
                    <th key={s.id} scope="col">
                      {visible(s.label)}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {rows
                  .filter((_, i) => totals[i] > 0)
                  .map((row) => (
                    <tr key={row.day}>
                      <th scope="row">{row.day}</th>
                      {props.series.map((s) => (
                        <td key={s.id}>{(row.parts[s.id] ?? 0).toLocaleString("en")}</td>
                      ))}
                    </tr>
                  ))}
              </tbody>
            </table>
          </div>
        </details>
      </figcaption>
    </figure>
  );
}

const HISTORY_SERIES = [
  { id: "web", label: "Web", tone: "s-1" },
  { id: "dns", label: "DNS", tone: "s-3" },
  { id: "active", label: "Active", tone: "s-6" },
] as const;

/** Score history (scan.php history=1): one line per series, 0 to 100, by time. */
export function ScoreHistory(props: { title: string; history: Record<"web" | "dns" | "active", HistoryPoint[]> }) {
  const titleId = useId();
  const descId = useId();
  const [box, WIDTH] = useWidth();
  const series = HISTORY_SERIES.filter((s) => (props.history[s.id] ?? []).length > 0);
  const times = series.flatMap((s) => props.history[s.id].map((p) => Date.parse(p.at)));
  if (times.length === 0) return <p class="empty">No scans yet: the history starts with the first one.</p>;
  const min = Math.min(...times);
  const max = Math.max(...times);
  const span = Math.max(1, max - min);
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (t: number) => PAD.left + (times.length === 1 || max === min ? plotW / 2 : ((t - min) / span) * plotW);
  const y = (score: number) => PAD.top + plotH - (Math.max(0, Math.min(100, score)) / 100) * plotH;
  const latest = series.map((s) => {
    const points = props.history[s.id];
    const last = points[points.length - 1];
    return `${s.label} ${last.score} (${last.grade})`;
  });
  return (
    <figure class="chart">
      <div class="chart-box" ref={box}>
        <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby={`${titleId} ${descId}`} class="lines">
          <title id={titleId}>{props.title}</title>
          <desc
            id={descId}
          >{`Latest scores: ${latest.join(", ")}; ${times.length} scans from ${isoShort(new Date(min).toISOString())} to ${isoShort(new Date(max).toISOString())}.`}</desc>
          {[0, 50, 100].map((v) => (
            <g key={v}>
              <line class="grid" x1={PAD.left} x2={WIDTH - PAD.right} y1={y(v)} y2={y(v)} />
              <text class="axis" x={PAD.left - 6} y={y(v) + 4} text-anchor="end">
                {v}
              </text>
            </g>
          ))}
          <text class="axis" x={PAD.left} y={HEIGHT - 8}>
            {localDate(min)}
          </text>
          <text class="axis" x={WIDTH - PAD.right} y={HEIGHT - 8} text-anchor="end">
            {localDate(max)}
          </text>
          {series.map((s) => {
            const points = props.history[s.id];
            const path = points.map((p, i) => `${i === 0 ? "M" : "L"}${x(Date.parse(p.at)).toFixed(1)},${y(p.score).toFixed(1)}`).join(" ");
            return (
              <g key={s.id} class={s.tone}>
                <path class="line" d={path} />
                {points.map((p) => (
                  <circle key={p.at} class="dot" cx={x(Date.parse(p.at))} cy={y(p.score)} r={4}>
                    <title>{`${s.label} ${isoShort(p.at)}: score ${p.score}, grade ${visible(p.grade)}, ${p.fail_count} failing`}</title>
                  </circle>
                ))}
              </g>
            );
          })}
        </svg>
      </div>
      <figcaption>
        <ul class="legend">
          {series.map((s) => (
            <li key={s.id}>
              <span class={`swatch ${s.tone}`} aria-hidden="true" />
              {s.label}
            </li>
          ))}
        </ul>
        <details>
          <summary>The numbers</summary>
          {/* biome-ignore lint/a11y/useSemanticElements: a scrollable region must be reachable by keyboard (axe scrollable-region-focusable) */}
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: the same region, focusable so it can be scrolled by keyboard */}
          <div class="table-wrap" role="region" aria-label={`${props.title}: numbers`} tabIndex={0}>
            <table class="numbers">
              <thead>
                <tr>
                  <th scope="col">Scan</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Score</th>
                  <th scope="col">Grade</th>
                  <th scope="col">Failing</th>
                </tr>
              </thead>
              <tbody>
                {series.flatMap((s) =>
                  props.history[s.id].map((p) => (
                    <tr key={`${s.id}${p.at}`}>
                      <th scope="row">{isoShort(p.at)}</th>
                      <td>{s.label}</td>
                      <td>{p.score}</td>
                      <td>{visible(p.grade)}</td>
                      <td>{p.fail_count}</td>
                    </tr>
                  )),
                )}
              </tbody>
            </table>
          </div>
        </details>
      </figcaption>
    </figure>
  );
}
