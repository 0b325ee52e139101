// The time series chart (uPlot): the chosen figure per hour or day, the previous period dashed,
// the site's notes of the period as dotted lines with a flag that names them on hover.
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

import type { Annotation } from "./notes";
import type { Interval, Point } from "./api";

interface ChartProps {
  points: Point[];
  previous: Point[] | null;
  metric: keyof Point;
  label: string;
  interval: Interval;
  timezone: string;
  format: (value: number) => string;
  notes?: Annotation[];
}

const WHOLE = [1, 2, 5].flatMap((step) => [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7].map((scale) => step * scale)).sort((a, b) => a - b);

/** A CSS colour (custom properties may hold light-dark()) resolved to what canvas understands. */
function colour(host: HTMLElement, variable: string): string {
  const probe = document.createElement("span");
  probe.style.color = `var(${variable})`;
  host.appendChild(probe);
  const resolved = getComputedStyle(probe).color;
  probe.remove();
  return resolved;
}

function epoch(point: Point, interval: Interval): number {
  // Daily points are dates ("2026-11-20"); place them at noon UTC so no zone moves them a day.
  return interval === "day" ? Date.parse(`${point.time}T12:00:00Z`) / 1000 : Date.parse(point.time) / 1000;
}

/** The notes placed on the x axis: one flag per day (its notes joined), at the day's point (daily)
 * or its first hour (hourly); notes of days the series does not show are left out. */
function placed(notes: Annotation[], points: Point[], interval: Interval): { x: number; label: string; date: string }[] {
  const byDay = new Map<string, string[]>();
  for (const note of notes) byDay.set(note.date, [...(byDay.get(note.date) ?? []), note.text]);
  const out: { x: number; label: string; date: string }[] = [];
  for (const [date, texts] of byDay) {
    const point = points.find((p) => p.time.slice(0, 10) === date);
    if (point) out.push({ x: epoch(point, interval), label: `${date}: ${texts.join(" · ")}`, date });
  }
  return out;
}

function notesPlugin(notes: { x: number; label: string; date: string }[], stroke: string): uPlot.Plugin {
  let flags: HTMLElement[] = [];
  return {
    hooks: {
      init: [
        (u) => {
          flags = notes.map((note) => {
            const flag = document.createElement("span");
            flag.className = "chart-note";
            flag.title = note.label;
            flag.dataset.date = note.date;
            u.over.appendChild(flag);
            return flag;
          });
        },
      ],
      draw: [
        (u) => {
          const { ctx } = u;
          ctx.save();
          ctx.strokeStyle = stroke;
          ctx.lineWidth = Math.max(1, devicePixelRatio);
          ctx.setLineDash([3 * devicePixelRatio, 3 * devicePixelRatio]);
          notes.forEach((note, i) => {
            flags[i].style.left = `${u.valToPos(note.x, "x")}px`;
            const at = Math.round(u.valToPos(note.x, "x", true));
            ctx.beginPath();
            ctx.moveTo(at, u.bbox.top);
            ctx.lineTo(at, u.bbox.top + u.bbox.height);
            ctx.stroke();
          });
          ctx.restore();
        },
      ],
    },
  };
}

export function Chart({ points, previous, metric, label, interval, timezone, format, notes }: ChartProps) {
  const host = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const element = host.current;
    if (!element) return undefined;
    let plot: uPlot | null = null;
    const build = () => {
      plot?.destroy();
      const xs = points.map((p) => epoch(p, interval));
      const ys = points.map((p) => Number(p[metric]));
      const data: uPlot.AlignedData = [xs, ys];
      const last = xs.length - 1;
      // At rest (no point under the cursor) the legend shows the latest point, not dashes.
      const at = (idx: number | null) => (idx == null ? last : idx);
      const pointLabel =
        interval === "day"
          ? new Intl.DateTimeFormat(undefined, { weekday: "short", month: "short", day: "numeric", timeZone: "UTC" })
          : new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "numeric", minute: "2-digit", timeZone: timezone });
      const series: uPlot.Series[] = [
        { label: interval === "day" ? "Day" : interval === "hour" ? "Hour" : "Minute", value: (_u, _v, _s, idx) => (last < 0 ? "" : pointLabel.format(new Date(xs[at(idx)] * 1000))) },
        { label, stroke: colour(element, "--accent"), width: 2, fill: colour(element, "--accent-soft"), value: (_u, _v, _s, idx) => (last < 0 ? "–" : format(ys[at(idx)])) },
      ];
      if (previous) {
        const before = points.map((_, i) => (previous[i] ? Number(previous[i][metric]) : null));
        data.push(before as number[]);
        series.push({
          label: "Previous period",
          stroke: colour(element, "--muted"),
          width: 1.5,
          dash: [6, 5],
          value: (_u, _v, _s, idx) => {
            const v = last < 0 ? null : before[at(idx)];
            return v == null ? "–" : format(v);
          },
        });
      }
      const tickLabel =
        interval === "day"
          ? new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", timeZone: "UTC" })
          : new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "2-digit", timeZone: timezone });
      const text = colour(element, "--muted");
      const grid = colour(element, "--border");
      const axis: uPlot.Axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
      plot = new uPlot(
        {
          width: element.clientWidth,
          height: 260,
          series,
          tzDate: interval === "day" ? (ts) => uPlot.tzDate(new Date(ts * 1000), "UTC") : (ts) => uPlot.tzDate(new Date(ts * 1000), timezone),
          axes: [
            {
              ...axis,
              // As many labels as fit (about 90 px each), so dates never overlap on a phone.
              splits: (u) => {
                const fit = Math.max(2, Math.floor(u.width / 90));
                return xs.filter((_, i) => i % Math.max(1, Math.ceil(xs.length / fit)) === 0);
              },
              values: (_u, ticks) => ticks.map((t) => tickLabel.format(new Date(t * 1000))),
            },
            {
              ...axis,
              size: 56,
              // Counts and seconds tick on whole numbers; rates may use fractions.
              incrs: metric === "bounce_rate" || metric === "views_per_visit" ? undefined : WHOLE,
              values: (_u, ticks) => ticks.map((t) => format(t)),
            },
          ],
          scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
          legend: { show: true },
          cursor: { drag: { x: false, y: false } },
          plugins: notes?.length ? [notesPlugin(placed(notes, points, interval), colour(element, "--text"))] : [],
        },
        data,
        element,
      );
    };
    build();
    const resize = new ResizeObserver(() => plot?.setSize({ width: element.clientWidth, height: 260 }));
    resize.observe(element);
    // Rebuild with the new colours when the theme changes.
    const themed = new MutationObserver(build);
    themed.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    const scheme = window.matchMedia("(prefers-color-scheme: dark)");
    scheme.addEventListener("change", build);
    return () => {
      resize.disconnect();
      themed.disconnect();
      scheme.removeEventListener("change", build);
      plot?.destroy();
    };
  }, [points, previous, metric, label, interval, timezone, format, notes]);

  return <div class="report-chart" ref={host} aria-hidden="true" />;
}
