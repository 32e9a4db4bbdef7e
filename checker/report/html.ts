// `report`: one self-contained HTML file (no network, no library): the sequence diagram as an
// inline SVG drawn here, a step list to click through, per step what changed, the state diff
// and the model's tables (partition logs with HW and LSO), and the violation explained.
import { TOOL } from '../version.ts';
import { type Report, type ReportStep, describeChange, tableChanged } from './report.ts';
import type { DiagramEvent, Table } from './renderer.ts';

export const esc = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines;
}

// Diagram geometry, in SVG units (pixels at 100%).
const COLUMN = 220;
const LEFT = 60;
const HEADS = 44;
const LINE = 15;
const CHAR = 6.6;
const NOTE_WIDTH = 280;

interface Row {
  readonly step: number;
  readonly height: number;
  draw(y: number): string;
}

function svgText(x: number, y: number, lines: readonly string[], cls: string, anchor = 'middle'): string {
  return lines
    .map(
      (l, i) => `<text x="${x}" y="${y + i * LINE}" class="${cls}" text-anchor="${anchor}">${esc(l)}</text>`,
    )
    .join('');
}

function eventRow(step: ReportStep, e: DiagramEvent, x: (p: string) => number): Row {
  if (e.kind === 'note') {
    const lines = wrap(`${e.text}`, Math.floor((NOTE_WIDTH - 16) / CHAR));
    const height = lines.length * LINE + 16;
    return {
      step: step.step,
      height: height + 10,
      draw: (y) =>
        `<rect x="${x(e.over) - NOTE_WIDTH / 2}" y="${y + 5}" width="${NOTE_WIDTH}" height="${height}" rx="4" class="note${e.fault ? ' fault' : ''}"/>` +
        svgText(x(e.over), y + 5 + LINE + 2, lines, 'note-text'),
    };
  }
  const [from, to] = [x(e.from), x(e.to)];
  const width = Math.max(Math.abs(to - from) - 20, COLUMN - 20);
  const late =
    e.kind === 'message' && e.sentAt !== undefined && e.sentAt < step.step - 1 ? e.sentAt : undefined;
  const lines = wrap(e.text, Math.floor(width / CHAR));
  const effect =
    e.kind === 'message' && e.effect !== undefined ? wrap(`⇒ ${e.effect}`, Math.floor(width / CHAR)) : [];
  const extra = late === undefined ? 0 : 1;
  const height = (lines.length + extra) * LINE + 14 + effect.length * LINE;
  return {
    step: step.step,
    height: height + 8,
    draw: (y) => {
      const mid = (from + to) / 2;
      let out = svgText(mid, y + LINE, lines, e.kind === 'lost' ? 'msg lost-text' : 'msg');
      if (late !== undefined)
        out += svgText(
          mid,
          y + LINE * (lines.length + 1),
          [`sent at step ${late}, delivered ${step.step - late} steps later`],
          'late',
        );
      const ly = y + (lines.length + extra) * LINE + 6;
      if (e.kind === 'lost') {
        const end = from + (to - from) * 0.6;
        out += `<line x1="${from}" y1="${ly}" x2="${end}" y2="${ly}" class="arrow lost"/>`;
        out += `<path d="M${end - 6} ${ly - 6} L${end + 6} ${ly + 6} M${end - 6} ${ly + 6} L${end + 6} ${ly - 6}" class="cross"/>`;
      } else {
        const tip = to > from ? to - 2 : to + 2;
        out += `<line x1="${from}" y1="${ly}" x2="${tip}" y2="${ly}" class="arrow${e.response ? ' response' : ''}${late === undefined ? '' : ' delayed'}" marker-end="url(#head)"/>`;
      }
      if (effect.length > 0)
        out += svgText(to + (to > from ? -6 : 6), ly + LINE, effect, 'effect', to > from ? 'end' : 'start');
      return out;
    },
  };
}

/** The lifeline heads, then the diagram itself. */
export function renderSvg(report: Report): string {
  const column = new Map(report.participants.map((p, i) => [p, LEFT + COLUMN / 2 + i * COLUMN]));
  const x = (p: string) => column.get(p) ?? LEFT + COLUMN / 2;
  const width = LEFT + report.participants.length * COLUMN + 20;
  const rows = report.steps.flatMap((s) => s.events.map((e) => eventRow(s, e, x)));
  const over = report.participants.filter((p) => report.explanation.over.includes(p));
  const [left, right] =
    over.length === 0
      ? [x(report.participants[0]!), x(report.participants[0]!)]
      : [x(over[0]!), x(over[over.length - 1]!)];
  const boxWidth = Math.max(right - left + 200, 360);
  const verdict = wrap(
    `✗ ${report.property} violated: ${report.explanation.text}`,
    Math.floor((boxWidth - 20) / CHAR),
  );

  let y = 6;
  const body: string[] = [];
  for (const step of report.steps) {
    const mine = rows.filter((r) => r.step === step.step);
    if (mine.length === 0) continue;
    const height = mine.reduce((h, r) => h + r.height, 0);
    const parts = [
      `<rect x="0" y="${y}" width="${width}" height="${height}" class="band"/>`,
      `<text x="10" y="${y + 18}" class="step-no">${step.step}</text>`,
    ];
    let ry = y;
    for (const r of mine) {
      parts.push(r.draw(ry));
      ry += r.height;
    }
    body.push(
      `<g class="step" data-step="${step.step}" tabindex="-1"><title>${esc(`step ${step.step}: ${step.action}`)}</title>${parts.join('')}</g>`,
    );
    y += height;
  }
  const verdictTop = y + 12;
  const verdictHeight = verdict.length * LINE + 16;
  const height = verdictTop + verdictHeight + 16;
  const cx = (left + right) / 2;
  const heads = report.participants
    .map(
      (p) =>
        `<rect x="${x(p) - 60}" y="8" width="120" height="30" rx="4" class="head"/><text x="${x(p)}" y="28" class="head-text" text-anchor="middle">${esc(p)}</text>`,
    )
    .join('');
  const lifelines = report.participants
    .map((p) => `<line x1="${x(p)}" y1="0" x2="${x(p)}" y2="${verdictTop}" class="lifeline"/>`)
    .join('');
  // The lifeline heads sit in their own strip that stays in view while the diagram scrolls.
  return (
    `<div class="heads"><svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${HEADS}" viewBox="0 0 ${width} ${HEADS}">${heads}</svg></div>` +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="sequence diagram">` +
    '<defs><marker id="head" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" class="arrowhead"/></marker></defs>' +
    `${lifelines}${body.join('')}` +
    `<g class="verdict"><rect x="${cx - boxWidth / 2}" y="${verdictTop}" width="${boxWidth}" height="${verdictHeight}" rx="4"/>` +
    `${svgText(cx, verdictTop + LINE + 4, verdict, 'verdict-text')}</g></svg>`
  );
}

function tableHtml(table: Table, changed: boolean): string {
  const head = table.columns.map((c) => `<th>${esc(c)}</th>`).join('');
  const rows = table.rows
    .map((r) => {
      const cells = r.cells.map((c) => `<td>${esc(c)}</td>`).join('');
      const marks = r.marks
        .map((m) => `<span class="mark mark-${esc(m.toLowerCase())}">${esc(m)}</span>`)
        .join(' ');
      return `<tr${r.marks.length > 0 ? ' class="marked"' : ''}>${cells}<td class="marks">${marks}</td></tr>`;
    })
    .join('');
  return `<div class="table${changed ? ' changed' : ''}" data-table="${esc(table.id)}"><h4>${esc(table.title)}${changed ? ' <span class="badge">changed</span>' : ''}</h4><table><thead><tr>${head}<th></th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function detailHtml(report: Report, step: ReportStep): string {
  const last = step.step === report.steps.length - 1;
  const changes =
    step.changes.length === 0
      ? '<p class="quiet">Nothing changed.</p>'
      : `<ul class="changes">${step.changes.map((c) => `<li>${esc(c)}</li>`).join('')}</ul>`;
  const tables = step.tables.map((t) => tableHtml(t, tableChanged(report, step.step, t.id))).join('');
  const diff =
    step.diff.length === 0
      ? ''
      : `<details class="diff"><summary>State diff: ${step.diff.length} field${step.diff.length === 1 ? '' : 's'} changed</summary><ul>${step.diff.map((d) => `<li><code>${esc(describeChange(d))}</code></li>`).join('')}</ul></details>`;
  const verdict = last
    ? `<div class="why"><strong>${esc(report.property)} is violated here.</strong> ${esc(report.explanation.text)}</div>`
    : '';
  return (
    `<section class="detail" data-step="${step.step}" hidden>` +
    `<h3>Step ${step.step}${step.actor === '' ? '' : ` · ${esc(step.actor)}`}</h3>` +
    `<p class="action">${esc(step.action)}</p>${step.label === '' ? '' : `<p class="label">action label: <code>${esc(step.label)}</code></p>`}` +
    `${verdict}<h4>What changed</h4>${changes}${diff}${tables}</section>`
  );
}

const STYLE = `
:root { font-family: system-ui, sans-serif; color: #1d2330; background: #f6f7f9; }
body { margin: 0; }
header { padding: 16px 24px; background: #fff; border-bottom: 1px solid #dde1e6; }
header h1 { margin: 0 0 4px; font-size: 20px; }
header .source { color: #5a6472; font-size: 13px; margin: 0 0 8px; }
.why { background: #fdecec; border: 1px solid #e8a3a3; border-radius: 6px; padding: 10px 14px; line-height: 1.45; }
header .spec { color: #3b4452; font-size: 14px; margin: 8px 0 0; }
main { display: grid; grid-template-columns: minmax(0, max-content) minmax(440px, 1fr); gap: 16px; padding: 16px 24px; align-items: start; }
.diagram { background: #fff; border: 1px solid #dde1e6; border-radius: 6px; overflow: auto; max-height: calc(100vh - 40px); max-width: 62vw; }
.diagram svg { display: block; }
.heads { position: sticky; top: 0; background: #fff; border-bottom: 1px solid #e4e7eb; z-index: 1; width: max-content; min-width: 100%; }
.side { position: sticky; top: 8px; display: flex; flex-direction: column; gap: 12px; max-height: calc(100vh - 24px); }
.steps { background: #fff; border: 1px solid #dde1e6; border-radius: 6px; overflow: auto; max-height: 34vh; margin: 0; padding: 4px 0; list-style: none; }
.steps button { all: unset; box-sizing: border-box; display: grid; grid-template-columns: 2.5em 4em 1fr; width: 100%; padding: 3px 10px; font-size: 13px; cursor: pointer; }
.steps button:hover { background: #eef2f8; }
.steps button[aria-current="true"] { background: #dbe7fb; font-weight: 600; }
.steps .no { color: #5a6472; text-align: right; padding-right: 8px; }
.steps .actor { color: #2f5aa8; }
.steps .act { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.details { background: #fff; border: 1px solid #dde1e6; border-radius: 6px; padding: 4px 16px 12px; overflow: auto; }
.detail h3 { margin: 10px 0 4px; }
.detail h4 { margin: 14px 0 6px; font-size: 14px; }
.action { font-family: ui-monospace, monospace; font-size: 13px; margin: 4px 0; }
.label { color: #5a6472; font-size: 12px; margin: 2px 0 8px; }
.changes { margin: 0; padding-left: 18px; font-size: 13px; line-height: 1.5; }
.quiet { color: #5a6472; font-size: 13px; }
.diff { font-size: 12px; margin-top: 8px; }
.diff ul { padding-left: 18px; }
.table { margin-top: 10px; }
.table h4 { font-weight: 600; }
.table table { border-collapse: collapse; font-family: ui-monospace, monospace; font-size: 12px; }
.table th, .table td { border-bottom: 1px solid #e4e7eb; padding: 2px 8px; text-align: left; }
.table th { color: #5a6472; font-weight: 500; }
tr.marked td { background: #fff6dd; }
.mark { display: inline-block; border-radius: 3px; padding: 0 5px; color: #fff; font-weight: 600; }
.mark-lso { background: #c0392b; } .mark-hw { background: #2f5aa8; }
.badge { font-size: 11px; background: #ffe7a8; border-radius: 3px; padding: 1px 5px; font-weight: 500; }
/* A narrow window stacks the panels; only the diagram scrolls sideways, inside its box. */
@media (max-width: 1000px) {
  main { grid-template-columns: minmax(0, 1fr); padding: 12px; }
  .diagram { max-width: none; max-height: 70vh; }
  .side { position: static; max-height: none; min-width: 0; }
  header { padding: 12px; }
}
svg text { font-family: system-ui, sans-serif; }
.head { fill: #e8eef9; stroke: #7f98c6; } .head-text { font-size: 13px; font-weight: 600; }
.lifeline { stroke: #a7b3c4; stroke-dasharray: 4 4; }
.band { fill: transparent; } .step { cursor: pointer; } .step:hover .band { fill: #f1f4f9; } .step.selected .band { fill: #dbe7fb; }
.step-no { font-size: 12px; fill: #5a6472; font-weight: 600; }
.msg { font-size: 12px; } .lost-text { fill: #b03030; } .effect { font-size: 11px; fill: #2c6e49; font-style: italic; }
.late { font-size: 11px; fill: #c05a00; font-weight: 600; }
.arrow { stroke: #1d2330; stroke-width: 1.4; } .arrow.response { stroke-dasharray: 6 4; } .arrow.delayed { stroke: #c05a00; stroke-width: 2; }
.arrow.lost { stroke: #b03030; stroke-dasharray: 3 3; } .cross { stroke: #b03030; stroke-width: 2.4; }
.arrowhead { fill: #1d2330; }
.note { fill: #fffbe6; stroke: #d8c98a; } .note.fault { fill: #ffe9cc; stroke: #e0a050; }
.note-text { font-size: 12px; }
.verdict rect { fill: #fdecec; stroke: #c0392b; } .verdict-text { font-size: 12px; fill: #7a1f1f; }
`;

const SCRIPT = `
(() => {
  const buttons = [...document.querySelectorAll('.steps button')];
  const details = [...document.querySelectorAll('.detail')];
  const groups = [...document.querySelectorAll('g.step')];
  let current = -1;
  // Scrolls only the panel that holds el, never the page.
  function reveal(el) {
    const box = el.closest('.steps, .diagram');
    const top = el.getBoundingClientRect().top - box.getBoundingClientRect().top;
    const bottom = top + el.getBoundingClientRect().height;
    if (top < 0) box.scrollTop += top - 8;
    else if (bottom > box.clientHeight) box.scrollTop += bottom - box.clientHeight + 8;
  }
  function select(step, scroll) {
    current = step;
    for (const b of buttons) b.setAttribute('aria-current', String(Number(b.dataset.step) === step));
    for (const d of details) d.hidden = Number(d.dataset.step) !== step;
    for (const g of groups) g.classList.toggle('selected', Number(g.dataset.step) === step);
    const button = buttons.find((b) => Number(b.dataset.step) === step);
    if (button) reveal(button);
    const group = groups.find((g) => Number(g.dataset.step) === step);
    if (scroll && group) reveal(group);
    history.replaceState(null, '', '#step-' + step);
  }
  for (const b of buttons) b.addEventListener('click', () => select(Number(b.dataset.step), true));
  for (const g of groups) g.addEventListener('click', () => select(Number(g.dataset.step), false));
  document.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' || e.key === 'j') select(Math.min(current + 1, details.length - 1), true);
    else if (e.key === 'ArrowUp' || e.key === 'k') select(Math.max(current - 1, 0), true);
    else return;
    e.preventDefault();
  });
  // #step-N picks a step when the page opens and whenever the address changes.
  const fromHash = () => {
    const m = /^#step-(\\d+)$/.exec(location.hash);
    return m && Number(m[1]) < details.length ? Number(m[1]) : undefined;
  };
  window.addEventListener('hashchange', () => {
    const step = fromHash();
    if (step !== undefined) select(step, true);
  });
  select(fromHash() ?? details.length - 1, true);
})();
`;

export function renderHtml(report: Report): string {
  const { source } = report;
  const list = report.steps
    .map(
      (s) =>
        `<li><button type="button" data-step="${s.step}"><span class="no">${s.step}</span><span class="actor">${esc(s.actor)}</span><span class="act">${esc(s.action)}</span></button></li>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(report.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>${esc(report.title)}</h1>
<p class="source">Model ${esc(source.model)} · spec ${esc(source.specFile)} · trace ${esc(source.traceFile)} · ${esc(TOOL)}</p>
<div class="why"><strong>Why ${esc(report.property)} is violated:</strong> ${esc(report.explanation.text)}${report.cycle === undefined ? '' : `<br>${esc(report.cycle)}`}<br><span class="quiet">${esc(report.property)}: ${esc(report.propertyDescription)}.</span></div>
${source.description === '' ? '' : `<p class="spec">${esc(source.description)}</p>`}
</header>
<main>
<div class="diagram">${renderSvg(report)}</div>
<div class="side">
<ol class="steps" aria-label="steps">${list}</ol>
<div class="details">${report.steps.map((s) => detailHtml(report, s)).join('')}</div>
</div>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
