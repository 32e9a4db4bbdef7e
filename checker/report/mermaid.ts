// `show --format mermaid`: a sequence diagram GitHub renders. Messages are drawn when they
// arrive (with the step that sent them when that was earlier); local steps and faults are notes.
import type { Report } from './report.ts';
import type { DiagramEvent } from './renderer.ts';

const WRAP = 60;

/** Mermaid treats ';' as a statement end and '#' as an entity start; long text wraps. */
function label(text: string): string {
  const escaped = text.replace(/[#;]/g, (c) => (c === '#' ? '#35;' : '#59;'));
  const words = escaped.split(' ');
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line !== '' && line.length + 1 + word.length > WRAP) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join('<br/>');
}

export function renderMermaid(report: Report): string {
  const ids = new Map(
    report.participants.map((p, i) => [
      p,
      `${p.replace(/[^A-Za-z0-9]/g, '_')}${/^[A-Za-z]/.test(p) ? '' : `_${i}`}`,
    ]),
  );
  const id = (p: string) => ids.get(p) ?? p.replace(/[^A-Za-z0-9]/g, '_');
  const lines = ['sequenceDiagram'];
  for (const p of report.participants) lines.push(`  participant ${id(p)} as ${p}`);
  const event = (step: number, e: DiagramEvent): string[] => {
    switch (e.kind) {
      case 'message': {
        const late = e.sentAt !== undefined && e.sentAt < step - 1 ? ` (sent at ${e.sentAt})` : '';
        const effect = e.effect === undefined ? '' : `<br/>⇒ ${label(e.effect)}`;
        return [
          `  ${id(e.from)}${e.response ? '-->>' : '->>'}${id(e.to)}: ${label(`${step}: ${e.text}${late}`)}${effect}`,
        ];
      }
      case 'lost':
        return [`  ${id(e.from)}-x${id(e.to)}: ${label(`${step}: lost: ${e.text}`)}`];
      case 'note': {
        const note = `  Note over ${id(e.over)}: ${label(`${step}: ${e.text}`)}`;
        return e.fault ? ['  rect rgb(255, 236, 200)', `  ${note}`, '  end'] : [note];
      }
    }
  };
  for (const step of report.steps) for (const e of step.events) lines.push(...event(step.step, e));
  const over = report.participants.filter((p) => report.explanation.over.includes(p));
  const span =
    over.length === 0
      ? id(report.participants[0]!)
      : over.length === 1
        ? id(over[0]!)
        : `${id(over[0]!)},${id(over[over.length - 1]!)}`;
  const all =
    report.participants.length === 1
      ? id(report.participants[0]!)
      : `${id(report.participants[0]!)},${id(report.participants[report.participants.length - 1]!)}`;
  if (report.cycle !== undefined) lines.push(`  Note over ${all}: ${label(`↺ ${report.cycle}`)}`);
  lines.push(
    '  rect rgb(255, 215, 215)',
    `    Note over ${span}: ${label(`✗ ${report.property} violated: ${report.explanation.text}`)}`,
    '  end',
  );
  return `${lines.join('\n')}\n`;
}
