// The explorer's page: one self-contained HTML file. The path (a list of action labels) lives in
// the address after "#path=", so a state can be shared and reopened; every state shown is the
// server's replay of that path.
import { esc } from '../report/html.ts';

const style = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #222; }
header { display: flex; gap: .5em; align-items: center; flex-wrap: wrap; padding: .6em 1em; background: #f3f3f3; border-bottom: 1px solid #ddd; }
header h1 { font-size: 1.1em; margin: 0 1em 0 0; }
main { display: grid; grid-template-columns: minmax(14em, 1fr) minmax(20em, 2.2fr) minmax(16em, 1.2fr); gap: 1em; padding: 1em; }
@media (max-width: 900px) { main { grid-template-columns: 1fr; } }
section h2 { font-size: 1em; margin: .2em 0 .5em; }
ol#path { padding-left: 1.6em; margin: 0; }
ol#path li { cursor: pointer; margin-bottom: .2em; }
ol#path li.current { font-weight: bold; }
#error { display: none; background: #fdd; border: 1px solid #d66; padding: .5em 1em; margin: .5em 1em 0; }
#notice { color: #555; }
ul.props { list-style: none; padding: 0; margin: 0 0 1em; }
ul.props li.violated { color: #a00; font-weight: bold; }
ul.props li.holds { color: #2a6; }
button.action { display: block; width: 100%; text-align: left; margin-bottom: .3em; padding: .3em .5em; cursor: pointer; }
button.action.suggested { border: 2px solid #36c; }
button.action small { display: block; color: #666; }
table { border-collapse: collapse; margin-bottom: 1em; font-size: 13px; overflow-x: auto; display: block; }
td, th { border: 1px solid #ccc; padding: .15em .4em; text-align: left; }
caption { text-align: left; font-weight: bold; padding: .2em 0; }
pre { white-space: pre-wrap; word-break: break-all; font-size: 12px; }
`;

const script = `
const $ = (id) => document.getElementById(id);
const esc = (t) => String(t).replace(/[&<>"']/g, (c) => '&#' + c.charCodeAt(0) + ';');
let path = [];
let forward = [];
let suggested = [];

function readHash() {
  const m = location.hash.match(/^#path=(.*)$/);
  if (m === null) return [];
  let value;
  try { value = JSON.parse(decodeURIComponent(m[1])); } catch { value = undefined; }
  if (!Array.isArray(value) || !value.every((x) => typeof x === 'string')) throw new Error('the path in the address is not a list of action labels');
  return value;
}

function showError(text) { $('error').textContent = text; $('error').style.display = text ? 'block' : 'none'; }

async function api(name, body) {
  const res = await fetch('/api/' + name, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(json.error || ('HTTP ' + res.status));
  return json;
}

function table(t) {
  const head = '<tr>' + t.columns.map((c) => '<th>' + esc(c) + '</th>').join('') + '<th></th></tr>';
  const rows = t.rows.map((r) => '<tr>' + r.cells.map((c) => '<td>' + esc(c) + '</td>').join('') + '<td>' + esc(r.marks.join(' ')) + '</td></tr>').join('');
  return '<table><caption>' + esc(t.title) + '</caption>' + head + rows + '</table>';
}

async function go(next, keepForward) {
  showError('');
  let info;
  try { info = await api('state', { path: next }); } catch (e) { showError(e.message); return; }
  path = next;
  if (!keepForward) forward = [];
  history.replaceState(null, '', '#path=' + encodeURIComponent(JSON.stringify(path)));
  $('step').textContent = 'step ' + path.length;
  $('path').innerHTML = '<li data-step="0"' + (path.length === 0 ? ' class="current"' : '') + '>initial state</li>' +
    info.path.map((p) => '<li data-step="' + p.step + '"' + (p.step === path.length ? ' class="current"' : '') + ' title="' + esc(p.label) + '">' + esc(p.action) + '</li>').join('');
  $('props').innerHTML = info.properties.map((p) => '<li class="' + (p.holds ? 'holds' : 'violated') + '" data-property="' + esc(p.name) + '">' + (p.holds ? '✓ ' : '✗ ') + esc(p.name) + (p.holds ? '' : ' violated') + '</li>').join('');
  // Every variable (messages in flight per connection, the ghost history, ...) below the model's own tables.
  const variables = '<pre>' + esc(JSON.stringify(info.view, null, 1)) + '</pre>';
  $('tables').innerHTML = info.tables.length > 0 ? info.tables.map(table).join('') + '<details><summary>all variables</summary>' + variables + '</details>' : variables;
  const hint = suggested.length > path.length && suggested.slice(0, path.length).every((l, i) => l === path[i]) ? suggested[path.length] : forward[0];
  $('actions').innerHTML = info.actions.length === 0 ? '<p>No action is enabled.</p>' :
    info.actions.map((a) => '<button class="action' + (a.label === hint ? ' suggested' : '') + '" data-label="' + esc(a.label) + '">' + esc(a.action) + '<small>' + esc(a.label) + '</small></button>').join('');
  $('back').disabled = path.length === 0;
  $('fwd').disabled = forward.length === 0;
  $('save').disabled = info.properties.every((p) => p.holds);
}

document.addEventListener('click', (ev) => {
  const button = ev.target.closest('button.action');
  if (button !== null) {
    const label = button.dataset.label;
    if (forward[0] === label) { forward = forward.slice(1); go([...path, label], true); } else go([...path, label], false);
    return;
  }
  const li = ev.target.closest('ol#path li');
  if (li !== null) {
    const k = Number(li.dataset.step);
    forward = [...path.slice(k), ...forward];
    go(path.slice(0, k), true);
  }
});
$('back').addEventListener('click', () => { forward = [path[path.length - 1], ...forward]; go(path.slice(0, -1), true); });
$('fwd').addEventListener('click', () => { const [next, ...rest] = forward; forward = rest; go([...path, next], true); });
$('save').addEventListener('click', async () => {
  try { const r = await api('save', { path }); $('notice').textContent = 'Saved ' + r.saved + ' (' + r.property + ')'; } catch (e) { showError(e.message); }
});
$('search').addEventListener('click', async () => {
  $('notice').textContent = 'Searching…';
  try {
    const r = await api('search', { path });
    if (!r.found) { $('notice').textContent = r.exhausted ? 'No violation is reachable from here.' : r.stoppedBy === 'maxSeconds' ? 'No violation found from here before the time limit (explore --max-seconds).' : 'No violation within ' + r.bound + ' states from here.'; return; }
    $('notice').textContent = r.property + ' is violated ' + (r.path.length - path.length) + ' steps from here.';
    await go(r.path, false);
  } catch (e) { showError(e.message); }
});
window.addEventListener('hashchange', () => { let p; try { p = readHash(); } catch (e) { showError(e.message); return; } if (JSON.stringify(p) !== JSON.stringify(path)) go(p, false); });

(async () => {
  const info = await api('info', {});
  suggested = info.suggested;
  let start = [];
  let problem = '';
  try { start = readHash(); } catch (e) { problem = e.message; }
  await go(start, false);
  if (problem) showError(problem);
})();
`;

export function explorerPage(title: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>txcheck explore: ${esc(title)}</title><style>${style}</style></head>
<body>
<header><h1>${esc(title)}</h1><span id="step"></span>
<button id="back">◀ back</button><button id="fwd">forward ▶</button>
<button id="search">search from here</button><button id="save">save trace</button><span id="notice"></span></header>
<div id="error"></div>
<main>
<section><h2>Path</h2><ol id="path" start="0"></ol></section>
<section><h2>State</h2><ul class="props" id="props"></ul><div id="tables"></div></section>
<section><h2>Enabled actions</h2><div id="actions"></div></section>
</main>
<script>${script}</script>
</body></html>
`;
}
