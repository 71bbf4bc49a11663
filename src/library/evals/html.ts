// An eval's report as one self-contained HTML page (no script, no network): the task × agent
// matrix with each cell's pass count, the per-agent summary, and every cell with its loop's query
// (each matrix entry links to its cells). All text from the ledger or the set is escaped.
import type { EvalReport, ReportCell } from "./report.js";

function esc(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

const pct = (v: number | null) => (v === null ? "—" : `${(v * 100).toFixed(1)}%`);
const usd = (v: number | null) => (v === null ? "unknown" : `$${v.toFixed(4)}`);

function anchorOf(task: string, agent: string): string {
  return `cells-${encodeURIComponent(task)}-${encodeURIComponent(agent)}`.replace(/%/g, "_");
}

function matrixCell(cells: readonly ReportCell[], task: string, agent: string): string {
  const mine = cells.filter((c) => c.task === task && c.agent === agent);
  const passed = mine.filter((c) => c.outcome === "passed").length;
  const scored = mine.filter((c) => c.outcome === "passed" || c.outcome === "failed").length;
  const errors = mine.filter((c) => c.outcome === "error").length;
  const cls = scored === 0 ? "none" : passed === scored ? "all" : passed === 0 ? "zero" : "some";
  const extra =
    errors > 0 ? ` <span class="err">${errors} error${errors === 1 ? "" : "s"}</span>` : "";
  return `<td class="${cls}" data-testid="eval-cell" data-task="${esc(task)}" data-agent="${esc(agent)}"><a href="#${anchorOf(task, agent)}">${passed}/${scored}</a>${extra}</td>`;
}

/** The report as a self-contained HTML document. */
export function evalReportHtml(report: EvalReport): string {
  const agents = report.agents.map((a) => a.agent);
  const rows = report.tasks
    .map(
      (t) =>
        `<tr><th scope="row">${esc(t.task)}${t.certified ? ' <span class="cert">certified</span>' : ""}${t.quarantined ? ' <span class="err">quarantined</span>' : ""}</th>${agents.map((a) => matrixCell(report.cells, t.task, a)).join("")}</tr>`,
    )
    .join("\n");
  const summary = report.agents
    .map(
      (a) =>
        `<tr><th scope="row">${esc(a.agent)}</th><td>${a.scored}</td><td>${a.passed}</td><td>${a.failed}</td><td>${a.errors}</td><td>${pct(a.passRate)}</td><td>${pct(a.ci95[0])} – ${pct(a.ci95[1])}</td>${Object.entries(
          a.passAtK,
        )
          .map(([k, v]) => `<td title="pass@${esc(k)}">${pct(v)}</td>`)
          .join(
            "",
          )}<td>${a.tokens.input + a.tokens.output}</td><td>${usd(a.costUsd)}</td><td>${a.wallMsMedian === null ? "—" : `${Math.round(a.wallMsMedian)} ms`}</td></tr>`,
    )
    .join("\n");
  const ks = Object.keys(report.agents[0]?.passAtK ?? { "1": null });
  const groups = report.tasks
    .flatMap((t) =>
      agents.map((a) => {
        const mine = report.cells.filter((c) => c.task === t.task && c.agent === a);
        const lines = mine
          .map(
            (c) =>
              `<tr class="${esc(c.outcome)}"><td>${c.epoch}</td><td>${esc(c.outcome)}</td><td>${esc(c.stop ?? "—")}${c.closed === undefined ? "" : ` (${esc(c.closed.detail)})`}${c.error === undefined ? "" : ` ${esc(c.error.code)}`}</td><td><code>${esc(c.query)}</code></td><td>${c.passages}</td><td>${c.runs}</td><td>${c.tokens.input + c.tokens.output}</td><td>${usd(c.costUsd)}</td><td>${c.wallMs} ms</td></tr>`,
          )
          .join("\n");
        return `<h3 id="${anchorOf(t.task, a)}">${esc(t.task)} × ${esc(a)}</h3>
<table><thead><tr><th>epoch</th><th>outcome</th><th>stop</th><th>loop query (<code>warrant show QUERY</code>)</th><th>passages</th><th>runs</th><th>tokens</th><th>cost</th><th>wall</th></tr></thead>
<tbody>
${lines}
</tbody></table>`;
      }),
    )
    .join("\n");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(report.set.name)} — ${esc(report.eval)}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2rem; color: #1b1b1b; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: left; }
td.all { background: #d9f2d9; } td.zero { background: #f7d4d4; } td.some { background: #fbeec2; } td.none { background: #eee; }
.err { color: #a00; font-size: 0.85em; } .cert { color: #070; font-size: 0.85em; }
tr.failed td:nth-child(2) { color: #a00; } tr.passed td:nth-child(2) { color: #070; }
code { font-size: 0.9em; }
</style>
</head>
<body>
<h1>${esc(report.set.name)}</h1>
<p>Eval <code>${esc(report.eval)}</code> · set digest <code>${esc(report.set.digest)}</code> · ${report.epochs} epoch${report.epochs === 1 ? "" : "s"} · status <strong>${esc(report.status)}</strong>${report.limits.reached === null ? "" : ` (stopped at its ${esc(report.limits.reached)} limit)`}</p>
<h2>Tasks × agents (passed / scored)</h2>
<table>
<thead><tr><th>task</th>${agents.map((a) => `<th scope="col">${esc(a)}</th>`).join("")}</tr></thead>
<tbody>
${rows}
</tbody>
</table>
<h2>Agents</h2>
<table>
<thead><tr><th>agent</th><th>scored</th><th>passed</th><th>failed</th><th>errors</th><th>pass rate</th><th>95% (Wilson)</th>${ks.map((k) => `<th>pass@${esc(k)}</th>`).join("")}<th>tokens</th><th>cost</th><th>median wall</th></tr></thead>
<tbody>
${summary}
</tbody>
</table>
<h2>Cells</h2>
${groups}
</body>
</html>
`;
}
