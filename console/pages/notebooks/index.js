// @ts-check
// Notebooks: the caller's Jupyter notebooks (op 62) with their schedule and last run; create
// (op 58), rename (op 60, body `notebook_name`), run (op 64), schedule and unschedule (ops 65,
// 66), delete (op 59, confirmed first); a notebook's cells, written here and saved through the
// service's content route, and its last run's output read from the executed copy.
//
// Op 64 is declared as a GET with a JSON body, which a browser's fetch cannot send; the service
// takes the same body on POST (docs/api-tour.md, "Notebooks"), and that is what the page sends.
import { useEffect, useState } from "preact/hooks";
import { ApiError, del, get, post, put } from "../../lib/api.js";
import { ErrorNote, Field, FormResult, Loading, Page, Status, Table, age, html, time, useData, useForm } from "../../lib/ui.js";
import { formatTime } from "../../lib/prefs.js";

/** The application module a run from this page is recorded for (op 64's `module`). */
const RUN_MODULE = "Notebooks";
/** @typedef {import("../../lib/types.js").Notebook} Notebook */
/** @template {EventTarget} T @typedef {import("../../lib/types.js").ControlEvent<T>} ControlEvent */
/**
 * A cell as the editor holds it: its type and its source as one text.
 * @typedef {{ cell_type: string, source: string }} EditedCell
 */
const DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const path = (/** @type {string} */ id, rest = "") => `/_notebooks/notebooks/${encodeURIComponent(id)}${rest}`;

/** A run still queued or running: the page looks again every few seconds until it ends. */
const pending = (/** @type {Notebook} */ n) => n.attributes?.last_run_status === "queued" || n.attributes?.last_run_status === "running";
const POLL_MS = 2_000;
const REFRESH_MS = 30_000;

/** @type {Record<string, { tone: string, word: string }>} */
const RUN_STATUS = {
  succeeded: { tone: "normal", word: "succeeded" },
  failed: { tone: "alarm", word: "failed" },
  queued: { tone: "info", word: "queued" },
  running: { tone: "info", word: "running" },
};
/** @param {{ notebook: Notebook }} props */
function RunStatus({ notebook }) {
  const status = notebook.attributes?.last_run_status;
  if (!status) return html`<span class="muted">never run</span>`;
  const s = RUN_STATUS[status] ?? { tone: "normal", word: status };
  return html`<${Status} tone=${s.tone}>${s.word}</${Status}>`;
}

/**
 * "Mondays at 12:00 (Asia/Kolkata), until 2026-07-01 00:00 (Asia/Kolkata)", or "Not scheduled":
 * the schedule is kept in UTC (its form says so) and shown in the display zone like every time.
 * @param {Notebook} n
 */
function scheduleText(n) {
  const s = n.schedule ?? {};
  if (n.status !== "Scheduled" || !s.until) return "Not scheduled";
  // Today's run at the UTC time of day, as the display zone reads it.
  const at = Date.parse(`${new Date().toISOString().slice(0, 10)}T${s.time ?? "00:00"}:00Z`);
  const until = Date.parse(`${String(s.until).replace(" ", "T")}Z`);
  return `${s.period ? `${s.period}s` : "Every day"} at ${formatTime(at, { date: false })}, until ${formatTime(Number.isNaN(until) ? s.until : until)}`;
}

/** @param {{ notebooks: Notebook[], selectedId: string | null }} props */
function NotebookList({ notebooks, selectedId }) {
  return html`<${Table}
    caption=${`${notebooks.length} notebook${notebooks.length === 1 ? "" : "s"}, ${notebooks.filter((n) => n.status === "Scheduled").length} scheduled`}
    empty="No notebook yet. New notebook makes one."
    rows=${notebooks}
    rowKey=${(/** @type {Notebook} */ n) => n.notebook_id}
    rowClass=${(/** @type {Notebook} */ n) => (n.notebook_id === selectedId ? "selected" : "")}
    columns=${[
      { label: "Notebook", cell: (/** @type {Notebook} */ n) => html`<a href=${`#/notebooks/${encodeURIComponent(n.notebook_id)}`}>${n.notebook_name}</a>` },
      { label: "Schedule", cell: (/** @type {Notebook} */ n) => (n.status === "Scheduled" ? html`<span class="scheduled">${scheduleText(n)}</span>` : html`<span class="muted">Not scheduled</span>`) },
      { label: "Runs", num: true, cell: (/** @type {Notebook} */ n) => n.no_of_runs },
      {
        label: "Last run",
        cell: (/** @type {Notebook} */ n) => html`<${RunStatus} notebook=${n} />${n.last_run && n.last_run !== "-" ? html` <span class="muted small" title=${time(n.last_run, true)}>${age(n.last_run)}</span>` : null}`,
      },
      { label: "Changed", cell: (/** @type {Notebook} */ n) => html`<span title=${time(n.updated_at, true)}>${age(n.updated_at)}</span> <span class="muted small">by ${n.updated_by}</span>` },
    ]}
  />`;
}

/** @param {{ notebook: Notebook, onDone: () => Promise<void> }} props */
function RenameForm({ notebook, onDone }) {
  const form = useForm(async ({ notebook_name }) => {
    const text = await put(path(notebook.notebook_id), { notebook_name });
    await onDone();
    return text;
  });
  return html`<form class="inline-form" onSubmit=${form.onSubmit} aria-label="Rename">
    <${Field} label="Name" name="notebook_name" defaultValue=${notebook.notebook_name} error=${form.error} required />
    <button type="submit" disabled=${form.busy}>Rename</button>
    <${FormResult} error=${form.error} done=${form.done} fields=${["notebook_name"]} />
  </form>`;
}

/** A month from now in UTC, as a datetime-local value: a schedule's default end. */
function monthAhead() {
  return new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 16);
}

/** @param {{ notebook: Notebook, onDone: () => Promise<void> }} props */
function ScheduleForm({ notebook, onDone }) {
  /** @type {Partial<Notebook["schedule"]>} */
  const s = notebook.status === "Scheduled" ? notebook.schedule : {};
  const form = useForm(async ({ period, time: at, until }) => {
    // The service takes `YYYY-MM-DD HH:MM`; a datetime-local field gives `YYYY-MM-DDTHH:MM`.
    const body = { nbk_ids: [notebook.notebook_id], until: String(until).replace("T", " "), time: at || undefined, period: period || null };
    const text = await post("/_notebooks/notebooks/_schedule", body);
    await onDone();
    // The service takes an end already past and leaves the notebook Not Scheduled: say why.
    const past = Date.parse(`${String(until)}:00Z`) < Date.now();
    return past ? `${text}; Until is already past, so the notebook stays not scheduled` : text;
  });
  const unschedule = useForm(async () => {
    const text = await post("/_notebooks/notebooks/_unschedule", { nbk_ids: [notebook.notebook_id] });
    form.setDone(null);
    await onDone();
    return text;
  });
  return html`<form class="inline-form" onSubmit=${form.onSubmit} aria-label="Schedule">
      <${Field} label="Day" name="period" as="select" error=${form.error}>
        <option value="" selected=${!s.period}>Every day</option>
        ${DAYS.map((d) => html`<option value=${d} selected=${d === s.period}>${d}</option>`)}
      </${Field}>
      <${Field} label="Time (UTC)" name="time" type="time" defaultValue=${s.time ?? "06:00"} error=${form.error} />
      <${Field} label="Until (UTC)" name="until" type="datetime-local" defaultValue=${s.until ? s.until.replace(" ", "T") : monthAhead()} error=${form.error} required />
      <button type="submit" disabled=${form.busy}>Schedule</button>
      <${FormResult} error=${form.error} done=${form.done} fields=${["period", "time", "until"]} />
    </form>
    ${notebook.status === "Scheduled"
      ? html`<form class="inline-form" onSubmit=${unschedule.onSubmit} aria-label="Unschedule">
          <button type="submit" disabled=${unschedule.busy}>Unschedule</button>
          <${FormResult} error=${unschedule.error} done=${unschedule.done} />
        </form>`
      : null}`;
}

const text = (/** @type {unknown} */ value) => (Array.isArray(value) ? value.join("") : String(value ?? ""));
// Tracebacks carry terminal colours; they are noise on a page.
const plain = (/** @type {unknown} */ value) => text(value).replace(/\u001b\[[0-9;]*m/g, "");

/** One output of an executed cell: text, a PNG, or an error with its traceback. HTML output is not rendered (it could carry script). */
/** @param {{ output: import("../../lib/types.js").CellOutput }} props */
function Output({ output }) {
  if (output.output_type === "stream") return html`<pre class=${`out ${output.name === "stderr" ? "stderr" : ""}`}>${text(output.text)}</pre>`;
  if (output.output_type === "error") {
    return html`<pre class="out out-error"><${Status} tone="alarm">${output.ename}: ${output.evalue}</${Status}>${"\n"}${(output.traceback ?? []).map(plain).join("\n")}</pre>`;
  }
  const data = output.data ?? {};
  if (data["image/png"]) return html`<img class="out-img" alt="Cell output (image)" src=${`data:image/png;base64,${text(data["image/png"]).trim()}`} />`;
  if (data["text/plain"] !== undefined) return html`<pre class="out">${text(data["text/plain"])}</pre>`;
  return html`<p class="muted small">(an output of type ${Object.keys(data).join(", ") || output.output_type} not shown here)</p>`;
}

/** @param {{ notebook: Notebook }} props */
function RunOutput({ notebook }) {
  const ran = Boolean(notebook.attributes?.executed_path) && !pending(notebook);
  /** @type {import("../../lib/ui.js").Data<import("../../lib/types.js").NotebookContent | undefined>} */
  const executed = useData(
    () => (ran ? get(path(notebook.notebook_id, "/_content"), { executed: true }) : Promise.resolve(undefined)),
    [notebook.notebook_id, ran, notebook.no_of_runs, notebook.last_run, notebook.attributes?.last_run_status],
  );
  const error = notebook.attributes?.last_run_error;
  return html`<section aria-labelledby="nb-output">
    <h3 id="nb-output">Last run's output</h3>
    <p>
      <${RunStatus} notebook=${notebook} />${notebook.last_run && notebook.last_run !== "-" ? ` · started ${time(notebook.last_run, true)}` : ""}${` · ${notebook.no_of_runs} run${notebook.no_of_runs === 1 ? "" : "s"} in all`}
    </p>
    ${error ? html`<p class="error" role="alert">⚠ ${error}</p>` : null}
    ${pending(notebook) ? html`<${Loading} what="The run is under way; its output shows when it ends" />` : null}
    ${!ran && !pending(notebook) ? html`<p class="muted">Not run yet.</p>` : null}
    <${ErrorNote} error=${executed.error} />
    ${executed.data
      ? html`<ol class="cells output">
          ${(executed.data.cells ?? []).map(
            (cell) => html`<li class=${`cell cell-${cell.cell_type}`}>
              <div class="cell-label">${cell.cell_type === "code" ? `In [${cell.execution_count ?? " "}]` : cell.cell_type}</div>
              <pre class="src">${text(cell.source)}</pre>
              ${(cell.outputs ?? []).map((o) => html`<${Output} output=${o} />`)}
            </li>`,
          )}
        </ol>`
      : null}
  </section>`;
}

/**
 * The notebook's cells as text areas: enough to write a short analysis and run it from here.
 * @param {{ notebook: Notebook }} props
 */
function CellsEditor({ notebook }) {
  /** @type {import("../../lib/ui.js").Data<import("../../lib/types.js").NotebookContent>} */
  const source = useData(() => get(path(notebook.notebook_id, "/_content")), [notebook.notebook_id]);
  const [cells, setCells] = useState(/** @type {EditedCell[] | null} */ (null));
  useEffect(() => {
    if (source.data) setCells((source.data.cells ?? []).map((c) => ({ cell_type: c.cell_type === "markdown" ? "markdown" : "code", source: text(c.source) })));
  }, [source.data]);
  const form = useForm(async () => {
    const answer = await put(path(notebook.notebook_id, "/_content"), { cells: cells ?? [] });
    return answer;
  });
  // The cells' controls are drawn only once the cells are loaded: `list` is never null in them.
  /** @type {(list: EditedCell[] | null) => EditedCell[]} */
  const loaded = (list) => /** @type {EditedCell[]} */ (list);
  /** @type {(i: number, patch: Partial<EditedCell>) => void} */
  const change = (i, patch) => setCells((list) => loaded(list).map((c, j) => (j === i ? { ...c, ...patch } : c)));
  if (source.error) return html`<${ErrorNote} error=${source.error} />`;
  if (!cells) return html`<${Loading} what="Loading the cells" />`;
  return html`<form onSubmit=${form.onSubmit} aria-label="Cells">
    ${cells.length === 0 ? html`<p class="muted">The notebook is empty. Add a cell, write Python in it, save, and run.</p>` : null}
    <ol class="cells">
      ${cells.map(
        (cell, i) => html`<li class="cell">
          <div class="cell-tools">
            <${Field} label=${`Type of cell ${i + 1}`} name=${`type-${i}`} as="select" value=${cell.cell_type} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => change(i, { cell_type: e.currentTarget.value })}>
              <option value="code">Code</option>
              <option value="markdown">Text (Markdown)</option>
            </${Field}>
            <button type="button" class="link" onClick=${() => setCells((list) => loaded(list).filter((_c, j) => j !== i))}>Remove cell ${i + 1}</button>
          </div>
          <${Field}
            label=${`Cell ${i + 1}`}
            name=${`cell-${i}`}
            as="textarea"
            class="code"
            rows=${Math.min(16, Math.max(3, cell.source.split("\n").length + 1))}
            spellcheck="false"
            value=${cell.source}
            onInput=${(/** @type {ControlEvent<HTMLTextAreaElement>} */ e) => change(i, { source: e.currentTarget.value })}
          />
        </li>`,
      )}
    </ol>
    <div class="row">
      <button type="button" onClick=${() => setCells((list) => [...loaded(list), { cell_type: "code", source: "" }])}>Add cell</button>
      <button type="submit" class="primary" disabled=${form.busy}>Save cells</button>
    </div>
    <${FormResult} error=${form.error} done=${form.done} />
  </form>`;
}

/** @param {{ notebook: Notebook, onChanged: () => Promise<void>, onDeleted: () => Promise<void> }} props */
function NotebookDetail({ notebook, onChanged, onDeleted }) {
  const [runAnswer, setRunAnswer] = useState(/** @type {{ ok?: string, error?: unknown } | null} */ (null));
  const [running, setRunning] = useState(false);
  // "Run queued" is true only until the run ends; its output then speaks for it.
  const runStatus = notebook.attributes?.last_run_status;
  useEffect(() => {
    if (!pending(notebook)) setRunAnswer((a) => (a?.ok ? null : a));
  }, [runStatus, notebook.no_of_runs]);
  const run = async () => {
    setRunning(true);
    setRunAnswer(null);
    try {
      await post("/_notebooks/notebooks/_run", { nbkIds: [notebook.notebook_id], module: RUN_MODULE });
      setRunAnswer({ ok: "Run queued" });
      await onChanged();
    } catch (error) {
      setRunAnswer({ error });
    } finally {
      setRunning(false);
    }
  };
  const [deleteError, setDeleteError] = useState(/** @type {unknown} */ (null));
  const remove = async () => {
    if (!window.confirm(`Delete ${notebook.notebook_name}? Its file and its last run's output are deleted too.`)) return;
    setDeleteError(null);
    try {
      const answer = await del("/_notebooks/notebooks", { nbk_ids: [notebook.notebook_id] });
      // The spec's one error on HTTP 200: `No notebooks deleted` comes as an envelope with status 200.
      if (answer?.error) throw new ApiError(answer.error.status, answer.error.message, answer.error.field);
      await onDeleted();
    } catch (error) {
      setDeleteError(error);
    }
  };
  return html`<section class="card notebook-detail" aria-labelledby="nb-title">
    <header class="detail-head">
      <h2 id="nb-title">${notebook.notebook_name}</h2>
      <span class="muted small">${notebook.attributes?.path} · created ${time(notebook.created_at)} by ${notebook.created_by}</span>
      <span class="head-tools"><button type="button" class="danger" onClick=${remove}>Delete</button> <a href="#/notebooks">Close</a></span>
    </header>
    <div class="nb-actions">
      <div>
        <h3>Rename</h3>
        <${RenameForm} key=${notebook.notebook_id} notebook=${notebook} onDone=${onChanged} />
      </div>
      <div>
        <h3>Schedule</h3>
        <p class=${notebook.status === "Scheduled" ? "scheduled" : "muted"}>${scheduleText(notebook)}</p>
        <${ScheduleForm} key=${notebook.notebook_id} notebook=${notebook} onDone=${onChanged} />
      </div>
      <div>
        <h3>Run</h3>
        <div class="row">
          <button type="button" class="primary" disabled=${running || pending(notebook)} onClick=${run}>Run</button>
        </div>
        ${runAnswer?.ok ? html`<p class="done" role="status">✓ ${runAnswer.ok}</p>` : null}
        <${ErrorNote} error=${runAnswer?.error ?? deleteError} />
      </div>
    </div>
    <div class="nb-body">
      <section aria-labelledby="nb-cells">
        <h3 id="nb-cells">Cells</h3>
        <${CellsEditor} key=${notebook.notebook_id} notebook=${notebook} />
      </section>
      <${RunOutput} notebook=${notebook} />
    </div>
  </section>`;
}

/** @param {import("../../lib/types.js").PageProps} props */
export function Notebooks({ user, route }) {
  const selectedId = route.parts[1] ?? null;
  const [refreshMs, setRefreshMs] = useState(REFRESH_MS);
  /** @type {import("../../lib/ui.js").Data<Notebook[]>} */
  const list = useData(() => get("/_notebooks/notebooks/_all"), [user.username], refreshMs);
  const notebooks = list.data ?? [];
  // Looked at more often while a run is under way, so that its end shows without a reload.
  const anyPending = notebooks.some(pending);
  useEffect(() => setRefreshMs(anyPending ? POLL_MS : REFRESH_MS), [anyPending]);
  const [created, setCreated] = useState(/** @type {{ busy: boolean, error: unknown }} */ ({ busy: false, error: null }));
  const create = async () => {
    setCreated({ busy: true, error: null });
    try {
      const nb = await post("/_notebooks/notebooks");
      await list.reload();
      setCreated({ busy: false, error: null });
      location.hash = `#/notebooks/${encodeURIComponent(nb.notebook_id)}`;
    } catch (error) {
      setCreated({ busy: false, error });
    }
  };
  const selected = selectedId ? notebooks.find((n) => n.notebook_id === selectedId) : null;
  const tools = html`<button type="button" class="primary" disabled=${created.busy} onClick=${create}>New notebook</button>`;
  return html`<${Page} title="Notebooks" tools=${tools}>
    <div class="notebooks">
      <${ErrorNote} error=${created.error ?? list.error} />
      ${list.data === undefined && !list.error ? html`<${Loading} what="Loading the notebooks" />` : null}
      ${list.data ? html`<${NotebookList} notebooks=${notebooks} selectedId=${selectedId} />` : null}
      ${selectedId && list.data && !selected ? html`<p class="muted">That notebook is not among yours (it may have been deleted).</p>` : null}
      ${selected
        ? html`<${NotebookDetail}
            notebook=${selected}
            onChanged=${list.reload}
            onDeleted=${async () => {
              await list.reload();
              location.hash = "#/notebooks";
            }}
          />`
        : null}
    </div>
  </${Page}>`;
}
