// The realtime view's chart: visitors in each of the last 30 minutes, one bar a minute.
import { count } from "../format";
import type { Realtime } from "./api";

const WIDTH = 300;
const HEIGHT = 80;
const clock = new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "2-digit" });

function people(n: number, one: string, many: string): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

export function MinuteChart({ minutes }: { minutes: Realtime["minutes"] }) {
  if (minutes.length === 0) return null;
  const top = Math.max(1, ...minutes.map((m) => m.visitors));
  const step = WIDTH / minutes.length;
  const busiest = minutes.reduce((best, m) => (m.visitors > best.visitors ? m : best), minutes[0]);
  const total = minutes.reduce((sum, m) => sum + m.pageviews, 0);
  const summary =
    total === 0
      ? "No visits in the last 30 minutes."
      : `Visitors per minute over the last 30 minutes: ${minutes.map((m) => m.visitors).join(", ")}. ` +
        `Busiest minute ${clock.format(new Date(busiest.start))} with ${people(busiest.visitors, "visitor", "visitors")}; ` +
        `${people(total, "pageview", "pageviews")} in all.`;
  return (
    <figure class="realtime-minutes">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} preserveAspectRatio="none" role="img" aria-label={summary}>
        <line x1="0" y1={HEIGHT - 0.5} x2={WIDTH} y2={HEIGHT - 0.5} class="realtime-axis" />
        {minutes.map((m, i) => {
          const height = m.visitors === 0 ? 0 : Math.max(2, (m.visitors / top) * (HEIGHT - 4));
          return (
            <rect key={m.start} x={i * step + step * 0.15} y={HEIGHT - height} width={step * 0.7} height={height} rx="1">
              <title>
                {clock.format(new Date(m.start))}: {people(m.visitors, "visitor", "visitors")}, {people(m.pageviews, "pageview", "pageviews")}
              </title>
            </rect>
          );
        })}
      </svg>
      <figcaption>
        <span>30 minutes ago</span>
        <span>Visitors per minute</span>
        <span>now</span>
      </figcaption>
    </figure>
  );
}
