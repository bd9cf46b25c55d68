/**
 * A small SVG line chart of one metric per day. It draws the API's numbers exactly as given;
 * screen readers get a summary and the whole series as a table.
 */
import { useId, useMemo, useState, type MouseEvent } from 'react';

import { formatDay } from '../dates';
import { formatMetric, type MetricKind } from '../format';

export interface Point {
  date: string;
  value: number;
}

const W = 720;
const H = 260;
const PAD = { top: 16, right: 16, bottom: 32, left: 64 };
const INNER_W = W - PAD.left - PAD.right;
const INNER_H = H - PAD.top - PAD.bottom;

/** A round axis maximum at or above `max`: 1, 2, 2.5 or 5 times a power of ten. */
function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  const step = [1, 2, 2.5, 5, 10].find((s) => s * power >= max) ?? 10;
  return step * power;
}

export function LineChart({ points, label, kind, currency }: { points: Point[]; label: string; kind: MetricKind; currency: string }) {
  const [active, setActive] = useState<number | null>(null);
  const titleId = useId();
  const format = (v: number) => formatMetric(v, kind, currency);

  const geometry = useMemo(() => {
    const top = niceMax(Math.max(0, ...points.map((p) => p.value)));
    const x = (i: number) => PAD.left + (points.length > 1 ? (i / (points.length - 1)) * INNER_W : INNER_W / 2);
    const y = (v: number) => PAD.top + INNER_H - (Math.max(0, v) / top) * INNER_H;
    const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => top * f);
    // Every day of a week gets its label; longer ranges get six, evenly spread.
    const labelCount = points.length <= 8 ? points.length : 6;
    const labelAt = new Set(
      Array.from({ length: labelCount }, (_, k) => (labelCount > 1 ? Math.round((k * (points.length - 1)) / (labelCount - 1)) : 0)),
    );
    const path = points.map((p, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(p.value).toFixed(1)}`).join('');
    return { x, y, ticks, labelAt, path };
  }, [points]);

  if (!points.length) return null;

  const total = points.reduce((sum, p) => sum + p.value, 0);
  const peak = points.reduce((best, p) => (p.value > best.value ? p : best), points[0]!);
  const first = points[0]!.date;
  const last = points[points.length - 1]!.date;
  const summary =
    `${label} per day from ${formatDay(first)} to ${formatDay(last)}. ` +
    (kind === 'count' || kind === 'money' ? `Total ${format(Math.round(total * 100) / 100)}. ` : '') +
    `Highest ${format(peak.value)} on ${formatDay(peak.date)}.`;

  const onMove = (e: MouseEvent<SVGSVGElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    const vx = ((e.clientX - box.left) / box.width) * W;
    const i = points.length > 1 ? Math.round(((vx - PAD.left) / INNER_W) * (points.length - 1)) : 0;
    setActive(Math.max(0, Math.min(points.length - 1, i)));
  };

  const hover = active != null ? points[active] : undefined;
  const hx = active != null ? geometry.x(active) : 0;
  const tipText = hover ? `${formatDay(hover.date, 'short')}: ${format(hover.value)}` : '';
  const tipW = Math.max(90, tipText.length * 7 + 16);
  const tipX = Math.min(W - PAD.right - tipW, Math.max(PAD.left, hx - tipW / 2));

  return (
    <figure className="vd-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={titleId} onMouseMove={onMove} onMouseLeave={() => setActive(null)}>
        <title id={titleId}>{summary}</title>
        {geometry.ticks.map((t) => (
          <g key={t}>
            <line className="vd-chart__grid" x1={PAD.left} x2={W - PAD.right} y1={geometry.y(t)} y2={geometry.y(t)} />
            <text className="vd-chart__axis" x={PAD.left - 8} y={geometry.y(t) + 4} textAnchor="end">
              {format(t)}
            </text>
          </g>
        ))}
        {points.map((p, i) =>
          geometry.labelAt.has(i) ? (
            <text
              key={p.date}
              className="vd-chart__axis"
              x={geometry.x(i)}
              y={H - 10}
              textAnchor={i === 0 ? 'start' : i === points.length - 1 ? 'end' : 'middle'}
            >
              {formatDay(p.date, 'short')}
            </text>
          ) : null,
        )}
        <path className="vd-chart__line" d={geometry.path} />
        {points.map((p, i) => (
          <circle
            key={p.date}
            className="vd-chart__point"
            data-testid="chart-point"
            data-date={p.date}
            data-value={String(p.value)}
            cx={geometry.x(i)}
            cy={geometry.y(p.value)}
            r={points.length > 60 ? 2 : 3.5}
          />
        ))}
        {hover && (
          <g className="vd-chart__tip" pointerEvents="none">
            <line className="vd-chart__cursor" x1={hx} x2={hx} y1={PAD.top} y2={PAD.top + INNER_H} />
            <circle className="vd-chart__point vd-chart__point--active" cx={hx} cy={geometry.y(hover.value)} r={5} />
            <rect x={tipX} y={2} width={tipW} height={22} rx={6} />
            <text x={tipX + tipW / 2} y={17} textAnchor="middle">
              {tipText}
            </text>
          </g>
        )}
      </svg>
      <figcaption className="vd-visually-hidden">
        <table>
          <caption>{label} per day</caption>
          <thead>
            <tr>
              <th scope="col">Date</th>
              <th scope="col">{label}</th>
            </tr>
          </thead>
          <tbody>
            {points.map((p) => (
              <tr key={p.date}>
                <th scope="row">{formatDay(p.date)}</th>
                <td>{format(p.value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </figcaption>
    </figure>
  );
}
