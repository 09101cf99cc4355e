import { Decimal } from '../money/decimal.ts';
import { html, type Html } from './html.ts';

export interface Series {
  readonly name: string;
  readonly colour: string;
}

/** One bar (stacked when there are several series): a label and one decimal-text value per series. */
export interface Bar {
  readonly label: string;
  readonly values: readonly string[];
}

export const COLOURS = ['#2f5bd3', '#13a36b', '#e0a100', '#d64545', '#7b61c9', '#1b9aaa', '#8a8f98'];

/**
 * A stacked bar chart as inline SVG. Values stay decimal text; only the drawing geometry becomes a JS
 * number (pixels), never an amount shown or added.
 */
export function barChart(options: {
  bars: readonly Bar[];
  series: readonly Series[];
  title: string;
  width?: number;
  height?: number;
  id?: string;
}): Html {
  const width = options.width ?? 560;
  const height = options.height ?? 180;
  const pad = { left: 72, right: 8, top: 16, bottom: 34 };
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const totals = options.bars.map((b) =>
    b.values.reduce((a, v) => a.plus(new Decimal(v).abs()), new Decimal(0)),
  );
  const max = totals.reduce((a, t) => Decimal.max(a, t), new Decimal(0));
  const slot = options.bars.length > 0 ? plotW / options.bars.length : plotW;
  const barW = Math.max(2, Math.min(40, slot * 0.7));
  const scale = (v: Decimal) => (max.isZero() ? 0 : v.div(max).mul(plotH).toNumber());
  const rects: Html[] = [];
  options.bars.forEach((b, i) => {
    let y = pad.top + plotH;
    b.values.forEach((v, s) => {
      const h = scale(new Decimal(v).abs());
      if (h <= 0) return;
      y -= h;
      const x = pad.left + i * slot + (slot - barW) / 2;
      rects.push(
        html`<rect
          x="${x.toFixed(1)}"
          y="${y.toFixed(1)}"
          width="${barW.toFixed(1)}"
          height="${h.toFixed(1)}"
          fill="${options.series[s]?.colour ?? '#888'}"
          ><title>${b.label} ${options.series[s]?.name ?? ''}: ${v}</title></rect
        >`,
      );
    });
  });
  const every = Math.max(1, Math.ceil(options.bars.length / 8));
  const labels = options.bars.map((b, i) =>
    i % every === 0
      ? html`<text
          x="${(pad.left + i * slot + slot / 2).toFixed(1)}"
          y="${height - pad.bottom + 14}"
          text-anchor="middle"
          >${b.label}</text
        >`
      : '',
  );
  return html`<figure>
    <svg
      class="chart"
      role="img"
      aria-label="${options.title}"
      ${options.id ? html`id="${options.id}"` : ''}
      viewBox="0 0 ${width} ${height}"
      width="${width}"
      height="${height}"
    >
      <text x="${pad.left}" y="11">${options.title}</text>
      <line
        x1="${pad.left}"
        y1="${pad.top + plotH}"
        x2="${width - pad.right}"
        y2="${pad.top + plotH}"
        stroke="#c9ced8"
      />
      <text x="${pad.left - 4}" y="${pad.top + 8}" text-anchor="end">
        ${max.toSignificantDigits(6).toFixed()}
      </text>
      <text x="${pad.left - 4}" y="${pad.top + plotH}" text-anchor="end">0</text>
      ${rects}${labels}
    </svg>
    ${
      options.series.length > 1
        ? html`<figcaption class="legend">
            ${options.series.map((s) => html`<span><i style="background:${s.colour}"></i>${s.name}</span>`)}
          </figcaption>`
        : ''
    }
  </figure>`;
}
