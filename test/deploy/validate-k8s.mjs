// Validates Kubernetes objects against the API schemas of the `kubernetes-models` package.
// An ES module (the package ships only ESM), run by test/deploy/k8s.test.ts as a child process:
//   node test/deploy/validate-k8s.mjs objects.json   ->  prints [{kind, name, error|null}]
import fs from "node:fs";

const objects = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const results = [];
for (const obj of objects) {
  const [group, version] = obj.apiVersion.includes("/") ? obj.apiVersion.split("/") : [null, obj.apiVersion];
  const module = group ? `kubernetes-models/${group}/${version}` : `kubernetes-models/${version}`;
  let error = null;
  try {
    const models = await import(module);
    const Model = models[obj.kind];
    if (!Model) throw new Error(`no schema for ${obj.apiVersion} ${obj.kind}`);
    new Model(obj).validate();
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  }
  results.push({ kind: obj.kind, name: obj.metadata?.name, error });
}
process.stdout.write(JSON.stringify(results));
