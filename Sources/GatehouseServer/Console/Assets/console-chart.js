/*
 * Draws the dashboard's chart of flows (tokens issued), failures (wrong answers) and blocks per time bucket, from
 * the answer of GET /admin/v1/activity, as SVG stacked bars with their own axes, grid and legend.
 */
'use strict';
(function () {
  const GC = window.GatehouseConsole = window.GatehouseConsole || {};

  /** The series the chart draws: the audit event kind each one counts. */
  GC.chartSeries = [
    { key: 'flows', label: 'Flows (tokens issued)', event: 'token.issued' },
    { key: 'failures', label: 'Failures (wrong answers)', event: 'check.failure' },
    { key: 'blocks', label: 'Blocks', event: 'check.blocked' },
  ];

  /** The top of the scale: four equal whole steps of 1, 2 or 5 times a power of ten above `value`. */
  function niceMax(value) {
    if (value <= 4) return 4;
    const raw = value / 4;
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const step of [1, 2, 5, 10]) if (step * power >= raw) return 4 * step * power;
    return 40 * power;
  }

  function timeLabel(ms, spanMs) {
    const date = new Date(ms);
    if (spanMs > 2 * 86400000) return date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' }) + ' '
      + date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
    return date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  }

  /** The chart of `activity` ({buckets:[{startMs,counts}], bucketSec, totals}) as an SVG element `width` pixels
   *  wide (its container's width: the text keeps its size on a phone instead of being scaled down). */
  GC.activityChart = function (activity, availableWidth) {
    const h = GC.h;
    const width = Math.max(260, Math.round(availableWidth || 720));
    const height = Math.round(Math.min(280, Math.max(190, width * 0.4)));
    const left = 40, right = 14, top = 12, bottom = 30;
    const buckets = activity.buckets || [];
    const values = GC.chartSeries.map((series) => buckets.map((bucket) => Number((bucket.counts || {})[series.event] || 0)));
    const sums = buckets.map((_, index) => values.reduce((sum, series) => sum + series[index], 0));
    const max = niceMax(Math.max(0, ...sums));
    const plotWidth = width - left - right, plotHeight = height - top - bottom;
    const slot = plotWidth / Math.max(buckets.length, 1);
    const barWidth = Math.max(1, slot * (slot > 6 ? 0.72 : 0.85));
    const x = (index) => left + index * slot + (slot - barWidth) / 2;
    const y = (value) => top + plotHeight - value / max * plotHeight;
    const totals = activity.totals || {};
    const summary = GC.chartSeries.map((series) => series.label + ': ' + (totals[series.event] || 0)).join(', ');
    const svg = h('svg', { class: 'chart', viewBox: `0 0 ${width} ${height}`, width: width, height: height, role: 'img',
      'aria-labelledby': 'chart-title', id: 'activity-chart' },
      h('title', { id: 'chart-title' }, 'Activity per ' + activity.bucketSec + ' s since ' + new Date(activity.sinceMs).toLocaleString() + '. ' + summary));
    for (let step = 0; step <= 4; step++) {
      const value = max * step / 4;
      svg.appendChild(h('line', { class: 'grid', x1: left, x2: width - right, y1: y(value), y2: y(value) }));
      svg.appendChild(h('text', { class: 'axis', x: left - 6, y: y(value) + 4, 'text-anchor': 'end' }, String(value)));
    }
    const span = (activity.untilMs || 0) - (activity.sinceMs || 0);
    const ticks = Math.min(width < 480 ? 3 : 5, buckets.length);
    for (let tick = 0; tick < ticks; tick++) {
      const index = ticks === 1 ? 0 : Math.round(tick * (buckets.length - 1) / (ticks - 1));
      const anchor = tick === 0 ? 'start' : tick === ticks - 1 ? 'end' : 'middle';
      const at = tick === 0 ? left : tick === ticks - 1 ? width - right : x(index) + barWidth / 2;
      svg.appendChild(h('text', { class: 'axis', x: at, y: height - 8, 'text-anchor': anchor }, timeLabel(buckets[index].startMs, span)));
    }
    // Stacked bars: flows at the bottom, then failures, then blocks; each bucket's bar is its events' sum, so no
    // series hides another.
    buckets.forEach((bucket, index) => {
      let base = 0;
      GC.chartSeries.forEach((series, number) => {
        const value = values[number][index];
        if (!value) return;
        const top = y(base + value);
        svg.appendChild(h('rect', { class: 'bar ' + series.key, x: x(index).toFixed(1), y: top.toFixed(1), width: barWidth.toFixed(1),
          height: Math.max(1, y(base) - top).toFixed(1), 'data-series': series.key },
          h('title', {}, series.label + ': ' + value + ' at ' + new Date(bucket.startMs).toLocaleTimeString())));
        base += value;
      });
    });
    svg.appendChild(h('line', { class: 'baseline', x1: left, x2: width - right, y1: y(0), y2: y(0) }));
    return svg;
  };

  /** The chart's legend: each series' line style, name and total. */
  GC.chartLegend = function (activity) {
    const h = GC.h;
    const totals = activity.totals || {};
    return h('ul', { class: 'legend' }, GC.chartSeries.map((series) =>
      h('li', {}, h('span', { class: 'swatch ' + series.key, 'aria-hidden': 'true' }), series.label + ': ', h('strong', {}, String(totals[series.event] || 0)))));
  };
})();
