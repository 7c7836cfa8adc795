/**
 * Verifications per day, this billing period against the previous one, single and batch, drawn
 * by uPlot on a canvas (hidden from screen readers) with the same numbers as a table beside it.
 * Days are aligned by their position in the period, so "day 3" of both periods sit together.
 */
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { DayCount } from '../api/contract';
import { formatDay, formatNumber } from './format';
import { TableScroll } from './table-scroll';

const SERIES = [
  { label: 'This period, single', stroke: '#1f5eff', dash: undefined, period: 'current', kind: 'single' },
  { label: 'This period, batch', stroke: '#0f9d75', dash: undefined, period: 'current', kind: 'batch' },
  { label: 'Previous period, single', stroke: '#8fa9f5', dash: [6, 4], period: 'previous', kind: 'single' },
  { label: 'Previous period, batch', stroke: '#86cdb8', dash: [6, 4], period: 'previous', kind: 'batch' },
] as const;

let canvasSupport: boolean | undefined;
/** False in a DOM without a canvas (jsdom): the table alone is shown. */
function canvasSupported(): boolean {
  canvasSupport ??= (() => {
    try {
      return document.createElement('canvas').getContext('2d') !== null;
    } catch {
      return false;
    }
  })();
  return canvasSupport;
}

export interface DailyChartProps {
  current: DayCount[];
  previous: DayCount[];
  /** Days after this one (YYYY-MM-DD) have not happened yet: not drawn as zeros. */
  today: string;
}

function chartData({ current, previous, today }: DailyChartProps): uPlot.AlignedData {
  const days = Math.max(current.length, previous.length);
  const x = Array.from({ length: days }, (_, i) => i + 1);
  const column = (counts: DayCount[], kind: 'single' | 'batch', cutAtToday: boolean) =>
    x.map((_, i) => {
      const day = counts[i];
      if (!day || (cutAtToday && day.date > today)) return null;
      return day[kind];
    });
  return [
    x,
    ...SERIES.map((series) =>
      column(series.period === 'current' ? current : previous, series.kind, series.period === 'current'),
    ),
  ];
}

export function DailyChart(props: DailyChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const data = chartData(props);

  useEffect(() => {
    const element = box.current;
    if (!element || !canvasSupported()) return;
    const width = () => Math.max(280, element.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 260,
        scales: {
          x: { time: false },
          // Counts are whole numbers: never a tick at 0.25, and some height when all are zero.
          y: { range: (_, __, max) => [0, Math.max(4, Math.ceil(max * 1.1))] },
        },
        axes: [
          { label: 'Day of the billing period', stroke: '#475467', grid: { stroke: '#eaecf0' } },
          {
            stroke: '#475467',
            grid: { stroke: '#eaecf0' },
            incrs: [
              1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 1e6,
            ],
            values: (_, ticks) => ticks.map((tick) => formatNumber(tick)),
          },
        ],
        series: [
          { label: 'Day', value: (_, day) => (day === null ? '—' : `day ${day}`) },
          ...SERIES.map((series) => ({
            label: series.label,
            stroke: series.stroke,
            width: 2,
            dash: series.dash ? [...series.dash] : undefined,
            // Points show a day on its own (the first day of a period has no line yet).
            points: { show: series.period === 'current', size: 5 },
            value: (_: uPlot, count: number | null) => (count === null ? '—' : formatNumber(count)),
          })),
        ],
      },
      [[], [], [], [], []],
      element,
    );
    chart.current = plot;
    const observer =
      typeof ResizeObserver === 'undefined'
        ? null
        : new ResizeObserver(() => plot.setSize({ width: width(), height: 260 }));
    observer?.observe(element);
    return () => {
      observer?.disconnect();
      plot.destroy();
      chart.current = null;
    };
  }, []);

  useEffect(() => {
    chart.current?.setData(data);
  });

  const rows = Math.max(props.current.length, props.previous.length);
  return (
    <figure className="chart">
      <div ref={box} className="chart-canvas" aria-hidden="true" />
      <figcaption className="sr-only">
        Verifications per day: this billing period compared with the previous one, single and batch. The same
        numbers are in the table below.
      </figcaption>
      <details className="chart-table">
        <summary>Show the numbers as a table</summary>
        <TableScroll label="Verifications per day">
          <table className="table">
            <caption className="sr-only">Verifications per day</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">This period</th>
                <th scope="col">Single</th>
                <th scope="col">Batch</th>
                <th scope="col">Previous period</th>
                <th scope="col">Single</th>
                <th scope="col">Batch</th>
              </tr>
            </thead>
            <tbody>
              {Array.from({ length: rows }, (_, i) => {
                const now = props.current[i];
                const before = props.previous[i];
                return (
                  <tr key={i}>
                    <th scope="row">{i + 1}</th>
                    <td>{now ? formatDay(now.date) : '—'}</td>
                    <td className="num">{now && now.date <= props.today ? formatNumber(now.single) : '—'}</td>
                    <td className="num">{now && now.date <= props.today ? formatNumber(now.batch) : '—'}</td>
                    <td>{before ? formatDay(before.date) : '—'}</td>
                    <td className="num">{before ? formatNumber(before.single) : '—'}</td>
                    <td className="num">{before ? formatNumber(before.batch) : '—'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableScroll>
      </details>
    </figure>
  );
}
