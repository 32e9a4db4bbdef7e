// `show --format text`: one row per step (step, actor, action, what changed), the model's
// focus tables (such as partition logs) where they changed and at the end, then the violation.
import { type Report, tableChanged } from './report.ts';
import type { Table } from './renderer.ts';

function tableLines(table: Table, indent: string): string[] {
  const widths = table.columns.map((c, i) =>
    Math.max(c.length, ...table.rows.map((r) => (r.cells[i] ?? '').length)),
  );
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  return [
    `${indent}${table.title}`,
    `${indent}  ${line(table.columns)}`.trimEnd(),
    ...table.rows.map((r) =>
      `${indent}  ${line(r.cells)}${r.marks.length > 0 ? `  ◀ ${r.marks.join(', ')}` : ''}`.trimEnd(),
    ),
  ];
}

export function renderText(report: Report): string {
  const lines: string[] = [`${report.title} (model ${report.source.model}, ${report.source.specFile})`];
  if (report.source.description !== '') lines.push(report.source.description);
  lines.push('');
  const actorWidth = Math.max(5, ...report.steps.map((s) => s.actor.length));
  const stepWidth = String(report.steps.length - 1).length + 1;
  lines.push(`${'step'.padStart(stepWidth + 1)}  ${'actor'.padEnd(actorWidth)}  action`);
  const indent = ' '.repeat(stepWidth + 1 + 2 + actorWidth + 2);
  for (const step of report.steps) {
    lines.push(
      `${String(step.step).padStart(stepWidth + 1)}  ${step.actor.padEnd(actorWidth)}  ${step.action}`,
    );
    for (const change of step.changes) lines.push(`${indent}· ${change}`);
    for (const table of step.tables) {
      if (table.focus && tableChanged(report, step.step, table.id)) lines.push(...tableLines(table, indent));
    }
  }
  const last = report.steps[report.steps.length - 1]!;
  const focus = last.tables.filter((t) => t.focus);
  if (focus.length > 0) {
    lines.push('', `After step ${last.step}:`);
    for (const table of focus) lines.push(...tableLines(table, '  '));
  }
  if (report.cycle !== undefined) lines.push('', `Cycle: ${report.cycle}`);
  lines.push(
    '',
    `Violated: ${report.property}: ${report.propertyDescription}.`,
    `Why: ${report.explanation.text}`,
  );
  return `${lines.join('\n')}\n`;
}
