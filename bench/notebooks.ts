/**
 * `npm run bench:notebooks`: what the sandbox costs a notebook run (docs/security.md, Notebooks).
 *   1. The runner on a one-cell notebook, unconfined (the way runs were made before the sandbox)
 *      and in the sandbox the service makes (bubblewrap as the owner's uid, the memory cgroup, the
 *      owner's API door listening), BENCH_NOTEBOOK_ROUNDS (8) rounds each, interleaved so that the
 *      machine's noise falls on both alike. Target: the sandbox adds at most 0.5 s (medians).
 *   2. Through the API, as a user sees it: `_run` to the run recorded finished, on one node
 *      running api, auth and notebooks (the token for the run's door issued and revoked).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openApiDoor } from "../services/notebooks/api-door";
import { notebookOf } from "../services/notebooks/files";
import { HELPERS, executeNotebook, findJupyterPython } from "../services/notebooks/kernel";
import { runMemory } from "../services/notebooks/memory";
import { DOOR_SOCKET, canSwitchUser, handFolderTo, launchOf, ownerUid, prepareRunsDir, probeSandbox, runEnv, type Launch } from "../services/notebooks/sandbox";
import { ADMIN, startTestNode } from "../test/helpers/node";
import { pct } from "./alerts-common";

const ROUNDS = Number(process.env.BENCH_NOTEBOOK_ROUNDS ?? 8);
const TARGET_MS = 500;
const CELL = "x = sum(range(1000))\nprint(x)";
const STOPS = { timeLimit: "time limit", interrupted: "interrupted" };

const median = (xs: number[]) => pct(xs, 0.5);
const s2 = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function timed(launch: () => Promise<{ launch: Launch; done?: () => Promise<void> }>): Promise<number> {
  const started = performance.now();
  const { launch: l, done } = await launch();
  const outcome = await executeNotebook(l, 120, STOPS).done;
  await done?.();
  if (outcome.status !== "succeeded") throw new Error(`run failed: ${outcome.error}`);
  return performance.now() - started;
}

async function main(): Promise<void> {
  const python = await findJupyterPython(process.env.NOTEBOOK_PYTHON);
  if (!python) throw new Error("no Python with nbclient and ipykernel (python3-nbclient, python3-ipykernel)");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ims-bench-notebooks-"));
  fs.chmodSync(work, 0o755);
  const folder = path.join(work, "owner");
  fs.mkdirSync(folder, { mode: 0o755 });
  fs.writeFileSync(path.join(folder, "bench.ipynb"), JSON.stringify(notebookOf([{ cell_type: "code", source: CELL }])));
  const { runsDir, helpers } = await prepareRunsDir(os.tmpdir(), work, HELPERS);
  const probe = await probeSandbox({ mode: "bwrap", python, helpers, runsDir, memoryMb: 1024 });
  if (!probe.ok) throw new Error(`no sandbox on this machine: ${probe.reason}`);
  const uid = canSwitchUser() ? ownerUid("bench@localhost") : null;
  await handFolderTo(folder, uid);

  const unconfined = () =>
    timed(async () => ({
      launch: {
        file: probe.executable,
        args: [path.join(HELPERS, "runner.py"), path.join(folder, "bench.ipynb"), path.join(folder, "bench.executed.ipynb"), "120"],
        env: { ...runEnv({ folder, door: work, helpers: HELPERS, tmp: os.tmpdir() }), IMS_API_SOCKET: "" },
        cwd: folder,
        hostPids: true,
        uid: null,
      },
    }));
  let n = 0;
  const sandboxed = () =>
    timed(async () => {
      const runDir = path.join(runsDir, `bench-${process.pid}-${n++}`);
      fs.mkdirSync(runDir, { mode: 0o700 });
      if (uid !== null) fs.chownSync(runDir, uid, uid);
      const door = await openApiDoor({ socket: path.join(runDir, DOOR_SOCKET), apiUrl: "http://127.0.0.1:9", token: "none", uid });
      const memory = runMemory(path.basename(runDir), 1024);
      const launch = launchOf({
        mode: "bwrap",
        python: probe.executable,
        runtime: probe.runtime,
        helpers,
        folder,
        runDir,
        uid,
        memory: memory.limit,
        command: (at) => [probe.executable, path.posix.join(at.helpers, "runner.py"), path.posix.join(at.folder, "bench.ipynb"), path.posix.join(at.folder, "bench.executed.ipynb"), "120"],
      });
      return {
        launch,
        done: async () => {
          memory.killAll();
          await door.close();
          await memory.release();
          fs.rmSync(runDir, { recursive: true, force: true });
        },
      };
    });

  console.log(`notebook runs: one cell (${JSON.stringify(CELL)}), ${ROUNDS} rounds each, interleaved; ${os.cpus().length} cores`);
  await unconfined(); // warm the page cache for both
  await sandboxed();
  const plain: number[] = [];
  const boxed: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    plain.push(await unconfined());
    boxed.push(await sandboxed());
  }
  const added = median(boxed) - median(plain);
  console.log(`  unconfined runner:   median ${s2(median(plain))}, p90 ${s2(pct(plain, 0.9))}`);
  console.log(`  sandboxed runner:    median ${s2(median(boxed))}, p90 ${s2(pct(boxed, 0.9))}`);
  console.log(`  the sandbox adds ${Math.round(added)} ms (median), ratio ${(median(boxed) / median(plain)).toFixed(2)}; target <= ${TARGET_MS} ms: ${added <= TARGET_MS ? "met" : "MISSED"}`);

  // 2. Through the API.
  const t = await startTestNode({ services: ["api", "auth", "notebooks"], env: { NOTEBOOK_CONCURRENCY: "1", LOG_LEVEL: "warn" } });
  try {
    const created = await t.http<{ notebook_id: string }>("POST", "/_notebooks/notebooks");
    const id = created.body.notebook_id;
    await t.http("PUT", `/_notebooks/notebooks/${id}/_content`, { body: { cells: [{ cell_type: "code", source: CELL }] } });
    const api: number[] = [];
    for (let i = 0; i <= ROUNDS; i++) {
      const started = performance.now();
      const res = await t.http("POST", "/_notebooks/notebooks/_run", { body: { nbkIds: [id], module: "Notebooks" } });
      if (res.status !== 200) throw new Error(`_run: ${res.status} ${JSON.stringify(res.body)}`);
      for (;;) {
        const nb = await t.http<{ no_of_runs: number; attributes: { last_run_status: string | null } }>("GET", `/_notebooks/notebooks/${id}`);
        if (nb.body.no_of_runs > i) {
          if (nb.body.attributes.last_run_status !== "succeeded") throw new Error(`run ${i}: ${JSON.stringify(nb.body)}`);
          break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      if (i > 0) api.push(performance.now() - started); // the first run warms the probe and the kernel's files
    }
    console.log(`  through the API (${ADMIN.username}): _run to finished, median ${s2(median(api))}, p90 ${s2(pct(api, 0.9))}`);
  } finally {
    await t.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
