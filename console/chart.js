// A small line chart in SVG, drawn by hand: one series of numbers over time, scaled to its maximum.

const ns = 'http://www.w3.org/2000/svg';

function svg(tag, attrs) {
  const el = document.createElementNS(ns, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/** Redraws `el` (an <svg>) with `points` (numbers, oldest first), a title and a unit. */
export function drawChart(el, points, title, format) {
  const width = 400;
  const height = 160;
  const pad = 24;
  el.replaceChildren();
  el.setAttribute('viewBox', `0 0 ${width} ${height}`);
  el.classList.add('chart');
  const max = Math.max(1, ...points);
  const label = svg('text', { x: 8, y: 16, 'font-size': 12, fill: '#1d2330' });
  label.textContent = `${title}: ${format(points.at(-1) ?? 0)} (max ${format(max)})`;
  el.append(label, svg('line', { x1: pad, y1: height - pad, x2: width - 8, y2: height - pad, stroke: '#d9dee7' }));
  if (points.length < 2) return;
  const step = (width - pad - 8) / (points.length - 1);
  const coords = points.map((p, i) => `${(pad + i * step).toFixed(1)},${(height - pad - (p / max) * (height - 2 * pad - 8)).toFixed(1)}`);
  el.append(svg('polyline', { points: coords.join(' '), fill: 'none', stroke: '#2f6fdf', 'stroke-width': 2 }));
}
