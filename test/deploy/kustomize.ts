/**
 * The part of kustomize that k8s/ uses (resources, namespace, labels, images, replicas, JSON 6902
 * patches with targets), so the manifest tests run where no kustomize binary is installed.
 * Where `kubectl` is installed the tests check that this renders exactly what kustomize renders.
 */
import fs from "node:fs";
import path from "node:path";
import { parse, parseAllDocuments } from "yaml";

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> } & Record<string, unknown>;
} & Record<string, any>;

interface PatchOp {
  op: "replace" | "add" | "remove";
  path: string;
  value?: unknown;
}

export interface Kustomization {
  namespace?: string;
  resources?: string[];
  labels?: { pairs: Record<string, string>; includeSelectors?: boolean }[];
  images?: { name: string; newName?: string; newTag?: string }[];
  replicas?: { name: string; count: number }[];
  patches?: { path?: string; patch?: string; target?: { kind?: string; name?: string } }[];
}

const CLUSTER_SCOPED = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume", "StorageClass"]);

export function readKustomization(dir: string): Kustomization {
  return parse(fs.readFileSync(path.join(dir, "kustomization.yaml"), "utf8")) as Kustomization;
}

/** Every file a kustomization names (resources that are files, patch files), with whether it exists. */
export function referencedFiles(dir: string): { file: string; exists: boolean }[] {
  const k = readKustomization(dir);
  const files = [...(k.resources ?? []), ...(k.patches ?? []).flatMap((p) => (p.path ? [p.path] : []))];
  return files.map((f) => {
    const full = path.join(dir, f);
    const exists = fs.existsSync(full) && (fs.statSync(full).isFile() || fs.existsSync(path.join(full, "kustomization.yaml")));
    return { file: f, exists };
  });
}

function unescape(segment: string): string {
  return segment.replace(/~1/g, "/").replace(/~0/g, "~");
}

export function applyJsonPatch(target: Record<string, any>, ops: PatchOp[]): void {
  for (const op of ops) {
    const parts = op.path.split("/").slice(1).map(unescape);
    const last = parts.pop()!;
    let node: any = target;
    for (const p of parts) {
      node = node?.[Array.isArray(node) ? Number(p) : p];
      if (node === undefined) throw new Error(`patch path ${op.path} does not exist`);
    }
    const key = Array.isArray(node) ? (last === "-" ? node.length : Number(last)) : last;
    if (op.op === "replace" && !(key in node)) throw new Error(`patch path ${op.path} does not exist`);
    if (op.op === "remove") {
      if (Array.isArray(node)) node.splice(key as number, 1);
      else delete node[key];
    } else if (op.op === "add" && Array.isArray(node)) node.splice(key as number, 0, structuredClone(op.value));
    else node[key] = structuredClone(op.value);
  }
}

function matches(obj: K8sObject, target: { kind?: string; name?: string } = {}): boolean {
  if (target.kind && !new RegExp(`^(${target.kind})$`).test(obj.kind)) return false;
  if (target.name && !new RegExp(`^(${target.name})$`).test(obj.metadata.name)) return false;
  return true;
}

function podSpecs(obj: K8sObject): Record<string, any>[] {
  if (obj.kind === "Pod") return [obj.spec];
  const template = obj.spec?.template?.spec ?? obj.spec?.jobTemplate?.spec?.template?.spec;
  return template ? [template] : [];
}

export function render(dir: string): K8sObject[] {
  const k = readKustomization(dir);
  let objects: K8sObject[] = [];
  for (const res of k.resources ?? []) {
    const full = path.join(dir, res);
    if (fs.existsSync(path.join(full, "kustomization.yaml"))) {
      objects.push(...render(full));
      continue;
    }
    for (const doc of parseAllDocuments(fs.readFileSync(full, "utf8"))) {
      const obj = doc.toJS() as K8sObject | null;
      if (obj) objects.push(obj);
    }
  }
  for (const p of k.patches ?? []) {
    const ops = parse(p.path ? fs.readFileSync(path.join(dir, p.path), "utf8") : p.patch!) as PatchOp[];
    for (const obj of objects) if (matches(obj, p.target)) applyJsonPatch(obj, ops);
  }
  for (const r of k.replicas ?? []) {
    for (const obj of objects) if (obj.metadata.name === r.name && obj.spec && "replicas" in obj.spec) obj.spec.replicas = r.count;
  }
  for (const image of k.images ?? []) {
    for (const obj of objects) {
      for (const spec of podSpecs(obj)) {
        for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
          const [name] = String(c.image).split(":");
          if (name === image.name) c.image = `${image.newName ?? image.name}:${image.newTag ?? "latest"}`;
        }
      }
    }
  }
  for (const l of k.labels ?? []) {
    for (const obj of objects) obj.metadata.labels = { ...(obj.metadata.labels ?? {}), ...l.pairs };
  }
  if (k.namespace) {
    objects = objects.map((obj) => (CLUSTER_SCOPED.has(obj.kind) ? obj : { ...obj, metadata: { ...obj.metadata, namespace: k.namespace } }));
  }
  return objects;
}
