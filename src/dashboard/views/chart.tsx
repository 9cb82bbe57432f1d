// Jobs finished and failed per minute over the last hour, drawn on the server as SVG: no
// chart library to ship or keep up to date, and it renders with scripts off.

import type { FinishedMinute } from '../../store/store.js';

const MINUTES = 60;
const WIDTH = 720;
const HEIGHT = 160;
const PLOT_TOP = 14;
const PLOT_BOTTOM = HEIGHT - 18;
const BAR_SLOT = WIDTH / MINUTES;

/** One bar pair per minute, oldest at the left; every minute of the hour present, zeros included. */
export function fillMinutes(minutes: readonly FinishedMinute[], now: Date): FinishedMinute[] {
  const lastMinute = Math.floor(now.getTime() / 60_000) * 60_000;
  const byStart = new Map(minutes.map((minute) => [minute.minute.getTime(), minute]));
  const filled: FinishedMinute[] = [];
  for (let i = MINUTES - 1; i >= 0; i--) {
    const start = lastMinute - i * 60_000;
    filled.push(byStart.get(start) ?? { minute: new Date(start), done: 0, dead: 0, failedAttempts: 0 });
  }
  return filled;
}

/**
 * Failed in the chart's sense: attempts that failed, the last one of a job that died
 * included (adding dead jobs too would count that failure twice). A cancelled job fails
 * no attempt and shows only in the bar's tooltip.
 */
function failedOf(minute: FinishedMinute): number {
  return minute.failedAttempts;
}

export function FinishedChart(props: { readonly minutes: readonly FinishedMinute[]; readonly now: Date }) {
  const filled = fillMinutes(props.minutes, props.now);
  const peak = Math.max(1, ...filled.map((minute) => Math.max(minute.done, failedOf(minute))));
  const scale = (n: number) => ((PLOT_BOTTOM - PLOT_TOP) * n) / peak;
  const totalDone = filled.reduce((sum, minute) => sum + minute.done, 0);
  const totalFailed = filled.reduce((sum, minute) => sum + failedOf(minute), 0);
  const totalDead = filled.reduce((sum, minute) => sum + minute.dead, 0);
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`Last hour: ${totalDone} jobs done, ${totalFailed} failed`}>
        <line x1="0" y1={PLOT_BOTTOM} x2={WIDTH} y2={PLOT_BOTTOM} class="axis" />
        <text x="2" y="10" class="label">{`${peak}/min`}</text>
        <text x="2" y={HEIGHT - 4} class="label">-60 min</text>
        <text x={WIDTH - 2} y={HEIGHT - 4} class="label end">now</text>
        {filled.map((minute, i) => {
          const x = i * BAR_SLOT;
          const done = scale(minute.done);
          const failed = scale(failedOf(minute));
          const when = minute.minute.toISOString().slice(11, 16);
          return (
            <g>
              <title>{`${when} UTC: ${minute.done} done, ${minute.dead} dead, ${minute.failedAttempts} failed attempts`}</title>
              <rect x={x + 1} y={PLOT_BOTTOM - done} width={BAR_SLOT / 2 - 1} height={done} class="done" />
              <rect x={x + BAR_SLOT / 2} y={PLOT_BOTTOM - failed} width={BAR_SLOT / 2 - 1} height={failed} class="failed" />
            </g>
          );
        })}
      </svg>
      <figcaption>
        <span class="key done" /> jobs done ({totalDone}) <span class="key failed" /> failed attempts ({totalFailed}; {totalDead} jobs died)
      </figcaption>
    </figure>
  );
}
