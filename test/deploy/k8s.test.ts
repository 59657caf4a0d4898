/**
 * k8s/: every manifest of the base and of both overlays, rendered, validated against the
 * Kubernetes API schemas (kubernetes-models), and checked for what an installation needs:
 * a Deployment per service with probes, resources and graceful shutdown, autoscalers, the api's
 * Service and Ingress, the StatefulSets, the migration Job, and references that resolve.
 */
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { ALL_SERVICES } from "../../lib/config";
import { referencedFiles, render, type K8sObject } from "./kustomize";

const K8S = path.resolve(__dirname, "../../k8s");
const DIRS = ["base", "overlays/small", "overlays/large"];
const rendered = Object.fromEntries(DIRS.map((d) => [d, render(path.join(K8S, d))])) as Record<string, K8sObject[]>;
const base = rendered.base!;

const find = (objs: K8sObject[], kind: string, name: string): K8sObject | undefined =>
  objs.find((o) => o.kind === kind && o.metadata.name === name);
const all = (objs: K8sObject[], kind: string): K8sObject[] => objs.filter((o) => o.kind === kind);
const envOf = (container: any): Record<string, string> =>
  Object.fromEntries((container.env ?? []).filter((e: any) => "value" in e).map((e: any) => [e.name, e.value]));

const kubectl = spawnSync("kubectl", ["version", "--client"], { encoding: "utf8" }).status === 0;

describe("kustomizations", () => {
  it.each(DIRS)("%s names only files that exist", (dir) => {
    const refs = referencedFiles(path.join(K8S, dir));
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.filter((r) => !r.exists)).toEqual([]);
  });

  it("base lists every manifest file under k8s/base", () => {
    const files = fs
      .readdirSync(path.join(K8S, "base"), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
      .sort();
    const listed = referencedFiles(path.join(K8S, "base")).map((r) => r.file).sort();
    expect(listed).toEqual(files);
  });

  (kubectl ? it.each(DIRS) : it.skip.each(DIRS))("%s renders here exactly as `kubectl kustomize` renders it", (dir) => {
    const out = execFileSync("kubectl", ["kustomize", path.join(K8S, dir)], { encoding: "utf8" });
    const theirs = parseAllDocuments(out).map((d) => d.toJS() as K8sObject);
    const key = (o: K8sObject) => `${o.kind}/${o.metadata.name}`;
    const sort = (objs: K8sObject[]) => [...objs].sort((a, b) => key(a).localeCompare(key(b)));
    expect(sort(rendered[dir]!)).toEqual(sort(theirs));
  });
});

describe("schemas", () => {
  it.each(DIRS)("every object of %s is valid against the Kubernetes API schemas", (dir) => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "k8s-")), "objects.json");
    fs.writeFileSync(file, JSON.stringify(rendered[dir]));
    const out = execFileSync(process.execPath, [path.join(__dirname, "validate-k8s.mjs"), file], { encoding: "utf8" });
    const results = JSON.parse(out) as { kind: string; name: string; error: string | null }[];
    expect(results).toHaveLength(rendered[dir]!.length);
    expect(results.filter((r) => r.error)).toEqual([]);
  });

  it("the validator refuses an invalid object (the check can fail)", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "k8s-")), "objects.json");
    const broken = structuredClone(find(base, "Deployment", "api")!);
    broken.spec.replicas = "two";
    fs.writeFileSync(file, JSON.stringify([broken]));
    const out = execFileSync(process.execPath, [path.join(__dirname, "validate-k8s.mjs"), file], { encoding: "utf8" });
    expect(JSON.parse(out)[0].error).toMatch(/replicas must be integer/);
  });
});

describe("base installation", () => {
  const config = find(base, "ConfigMap", "ims-config")!;
  const healthPort = Number(config.data.HEALTH_PORT);

  it("puts everything in the ims namespace", () => {
    expect(find(base, "Namespace", "ims")).toBeDefined();
    for (const o of base.filter((o) => o.kind !== "Namespace")) expect(o.metadata.namespace).toBe("ims");
  });

  it.each([...ALL_SERVICES])("runs %s as a Deployment with probes, resources and graceful shutdown", (name) => {
    const d = find(base, "Deployment", name)!;
    expect(d).toBeDefined();
    const pod = d.spec.template.spec;
    const [c] = pod.containers;
    expect(d.spec.selector.matchLabels).toEqual({ "app.kubernetes.io/name": name });
    expect(d.spec.template.metadata.labels["app.kubernetes.io/name"]).toBe(name);
    expect(envOf(c).SERVICES).toBe(name);
    expect(c.image).toBe(find(base, "Deployment", "api")!.spec.template.spec.containers[0].image);
    // The notebooks pod is the notebook runs' sandbox: a Secret of its own.
    const secret = name === "notebooks" ? "ims-notebooks" : "ims-secrets";
    expect(c.envFrom).toEqual([{ configMapRef: { name: "ims-config" } }, { secretRef: { name: secret } }]);
    const health = c.ports.find((p: any) => p.name === "health");
    expect(health.containerPort).toBe(healthPort);
    expect(c.readinessProbe.httpGet).toEqual({ path: "/ready", port: "health" });
    expect(c.livenessProbe.httpGet).toEqual({ path: "/live", port: "health" });
    for (const kind of ["requests", "limits"]) {
      expect(c.resources[kind].cpu).toBeDefined();
      expect(c.resources[kind].memory).toBeDefined();
    }
    const sleep = Number(c.lifecycle.preStop.exec.command.at(-1));
    expect(sleep).toBeGreaterThan(0);
    // preStop, then the process's drain (grace, in-flight HTTP), then the broker's (tracking shutdownTimeout 10 s).
    const settings = find(base, "ConfigMap", "ims-config")!.data;
    const drain = Number(settings.DRAIN_GRACE_S) + Number(settings.DRAIN_TIMEOUT_S);
    expect(drain).toBeGreaterThan(0);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(sleep + drain + 10 + 5);
    // The notebooks pod runs as root with a few capabilities, to run each owner's kernel as the owner's own uid (below).
    if (name === "notebooks") expect(pod.securityContext.runAsUser).toBe(0);
    else expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(d.spec.template.metadata.annotations["prometheus.io/port"]).toBe(String(healthPort));
  });

  it.each(["api", "pipelines", "alerting", "cm"])("autoscales %s", (name) => {
    const hpa = find(base, "HorizontalPodAutoscaler", name)!;
    expect(hpa.apiVersion).toBe("autoscaling/v2");
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name });
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
  });

  it("exposes the api by a Service and an Ingress that point at its http port", () => {
    const svc = find(base, "Service", "api")!;
    const container = find(base, "Deployment", "api")!.spec.template.spec.containers[0];
    const http = container.ports.find((p: any) => p.name === "http");
    expect(http.containerPort).toBe(Number(config.data.PORT));
    expect(svc.spec.selector).toEqual({ "app.kubernetes.io/name": "api" });
    expect(svc.spec.ports[0].targetPort).toBe("http");
    const ingress = find(base, "Ingress", "api")!;
    const backend = ingress.spec.rules[0].http.paths[0].backend.service;
    expect(backend.name).toBe("api");
    expect(svc.spec.ports.map((p: any) => p.name)).toContain(backend.port.name);
  });

  it.each([
    ["nats", "nats-headless", 4222],
    ["postgres", "postgres", 5432],
    ["redis", "redis", 6379],
  ])("runs %s as a StatefulSet with a volume, its pods named by the Service %s, reached on port %d", (name, governing, port) => {
    const sts = find(base, "StatefulSet", name as string)!;
    expect(sts.spec.serviceName).toBe(governing);
    expect(find(base, "Service", governing as string)!.spec.clusterIP).toBe("None");
    expect(sts.spec.volumeClaimTemplates).toHaveLength(1);
    expect(sts.spec.template.spec.containers[0].readinessProbe).toBeDefined();
    expect(find(base, "Service", name as string)!.spec.ports.map((p: any) => p.port)).toContain(port);
  });

  it("makes the notebooks pod the runs' sandbox: its own Secret, egress to the api and its own stores only, memory for its runs", () => {
    const d = find(base, "Deployment", "notebooks")!;
    const [c] = d.spec.template.spec.containers;
    const env = envOf(c);
    expect(env.NOTEBOOK_SANDBOX).toBe("pod");
    expect(env.NOTEBOOK_API_URL).toBe("http://api");
    // Its Secret has a database and a cache, none of the other services' secrets.
    const own = find(base, "Secret", "ims-notebooks")!;
    expect(Object.keys(own.stringData).sort()).toEqual(["DATABASE_URL", "REDIS_URL"]);
    expect(JSON.stringify(c.env)).not.toMatch(/TWILIO|SMTP|ADMIN_PASSWORD|SECRETS_KEY/);
    // Root with only what giving folders to owners' uids and running kernels as them needs.
    expect(c.securityContext.capabilities).toEqual({ drop: ["ALL"], add: ["CHOWN", "FOWNER", "DAC_OVERRIDE", "SETUID", "SETGID", "KILL"] });
    expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
    // Memory: NOTEBOOK_CONCURRENCY x NOTEBOOK_MEMORY_MB + 512 Mi.
    const mi = (q: string) => (q.endsWith("Gi") ? Number(q.slice(0, -2)) * 1024 : Number(q.replace(/Mi$/, "")));
    expect(mi(c.resources.limits.memory)).toBeGreaterThanOrEqual(Number(env.NOTEBOOK_CONCURRENCY) * Number(env.NOTEBOOK_MEMORY_MB) + 512);
    // Egress: the api, PostgreSQL, NATS, Redis and DNS, nothing else.
    const policy = find(base, "NetworkPolicy", "notebooks")!;
    expect(policy.spec.podSelector.matchLabels).toEqual({ "app.kubernetes.io/name": "notebooks" });
    expect(policy.spec.policyTypes).toEqual(["Egress"]);
    const targets = policy.spec.egress.map((rule: any) => [rule.to[0].podSelector.matchLabels["app.kubernetes.io/name"] ?? rule.to[0].podSelector.matchLabels["k8s-app"], rule.ports.map((p: any) => p.port)]);
    expect(targets).toEqual([["api", [3000]], ["postgres", [5432]], ["nats", [4222]], ["redis", [6379]], ["kube-dns", [53, 53]]]);
    const apiPort = find(base, "Deployment", "api")!.spec.template.spec.containers[0].ports.find((p: any) => p.name === "http").containerPort;
    expect(apiPort).toBe(3000);
  });

  it("runs NATS with JetStream and points the services at the in-cluster servers", () => {
    expect(find(base, "StatefulSet", "nats")!.spec.template.spec.containers[0].args).toContain("-js");
    expect(config.data.TRANSPORTER).toBe(["nats-0", "nats-1", "nats-2"].map((pod) => `nats://${pod}.nats-headless:4222`).join(","));
    const secret = find(base, "Secret", "ims-secrets")!;
    expect(secret.stringData.DATABASE_URL).toBe(`postgres://ims:${secret.stringData.POSTGRES_PASSWORD}@postgres:5432/ims`);
    // REDIS_URL carries Redis's password: in the Secret, not the ConfigMap.
    expect(config.data.REDIS_URL).toBeUndefined();
    expect(secret.stringData.REDIS_URL).toBe(`redis://:${secret.stringData.REDIS_PASSWORD}@redis:6379`);
  });

  it("runs NATS as a 3-node JetStream cluster: pods named, routed to each other, storage per pod, streams on 3 replicas", () => {
    const sts = find(base, "StatefulSet", "nats")!;
    expect(sts.spec.replicas).toBe(3);
    const [c] = sts.spec.template.spec.containers;
    const flag = (name: string) => c.args[c.args.indexOf(name) + 1];
    // server_name from the pod's own name, distinct per node.
    expect(flag("--server_name")).toBe("$(POD_NAME)");
    expect(c.env).toContainEqual({ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } });
    expect(flag("--cluster_name")).toBeTruthy();
    expect(flag("-sd")).toBe(c.volumeMounts.find((m: any) => m.name === sts.spec.volumeClaimTemplates[0].metadata.name).mountPath);
    // Routes to every pod through the headless Service, on the cluster port the pods listen on.
    const headless = find(base, "Service", sts.spec.serviceName)!;
    const routePort = headless.spec.ports.find((p: any) => p.name === "cluster").port;
    expect(c.ports.find((p: any) => p.name === "cluster").containerPort).toBe(routePort);
    // The routes sign in as `route`, coming in (--cluster) and going out (--routes).
    expect(flag("--cluster")).toBe(`nats://route:$(NATS_ROUTE_PASSWORD)@0.0.0.0:${routePort}`);
    const pods = Array.from({ length: sts.spec.replicas }, (_, i) => `nats-${i}.${sts.spec.serviceName}`);
    expect(flag("--routes").split(",")).toEqual(pods.map((pod) => `nats://route:$(NATS_ROUTE_PASSWORD)@${pod}:${routePort}`));
    expect(c.env).toContainEqual({ name: "NATS_ROUTE_PASSWORD", valueFrom: { secretKeyRef: { name: "ims-nats", key: "NATS_ROUTE_PASSWORD" } } });
    expect(headless.spec.publishNotReadyAddresses).toBe(true);
    // A client Service for the cluster as a whole, and the services told of every node.
    const client = find(base, "Service", "nats")!;
    expect(client.spec.clusterIP).toBeUndefined();
    expect(client.spec.ports.map((p: any) => p.port)).toContain(4222);
    expect(config.data.TRANSPORTER.split(",")).toEqual(pods.map((pod) => `nats://${pod}:4222`));
    expect(config.data.STREAM_REPLICAS).toBe("3");
    expect(find(base, "PodDisruptionBudget", "nats")!.spec.maxUnavailable).toBe(1);
  });

  it("migrates every schema in a Job, once, with MIGRATE_ONLY=1", () => {
    const job = find(base, "Job", "ims-migrate")!;
    const env = envOf(job.spec.template.spec.containers[0]);
    expect(env.MIGRATE_ONLY).toBe("1");
    expect(env.SERVICES!.split(",").sort()).toEqual(ALL_SERVICES.filter((s) => s !== "api").sort());
    expect(job.spec.template.spec.containers[0].envFrom).toEqual([{ configMapRef: { name: "ims-config" } }, { secretRef: { name: "ims-secrets" } }]);
  });

  it("refers only to ConfigMaps, Secrets, keys and claims that exist", () => {
    const secretKeys = (name: string) => Object.keys(find(base, "Secret", name)?.stringData ?? {});
    for (const o of base) {
      const spec = o.spec?.template?.spec;
      if (!spec) continue;
      for (const c of spec.containers) {
        for (const from of c.envFrom ?? []) {
          if (from.configMapRef) expect(find(base, "ConfigMap", from.configMapRef.name)).toBeDefined();
          if (from.secretRef) expect(find(base, "Secret", from.secretRef.name)).toBeDefined();
        }
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.secretKeyRef;
          if (ref) expect(secretKeys(ref.name)).toContain(ref.key);
        }
      }
      for (const v of spec.volumes ?? []) {
        if (v.persistentVolumeClaim) expect(find(base, "PersistentVolumeClaim", v.persistentVolumeClaim.claimName)).toBeDefined();
        if (v.configMap) expect(find(base, "ConfigMap", v.configMap.name)).toBeDefined();
      }
    }
  });
});

describe("the bus and the cache, with credentials", () => {
  const natsConf = fs.readFileSync(path.resolve(__dirname, "../../deploy/nats/nats.conf"), "utf8");
  const confUsers = [...natsConf.matchAll(/\{\s*user:\s*([a-z]+),\s*password:\s*\$([A-Z0-9_]+)\s*\}/g)].map((m) => ({ user: m[1]!, variable: m[2]! }));
  const busSecret = find(base, "Secret", "ims-nats")!;
  const sts = find(base, "StatefulSet", "nats")!;

  it("runs NATS with deploy/nats/nats.conf (the ConfigMap nats-config, the same text), mounted read-only", () => {
    expect(find(base, "ConfigMap", "nats-config")!.data["nats.conf"]).toBe(natsConf);
    const [c] = sts.spec.template.spec.containers;
    expect(c.args.slice(0, 2)).toEqual(["-c", "/etc/nats/nats.conf"]);
    const mount = c.volumeMounts.find((m: any) => m.mountPath === "/etc/nats");
    expect(mount.readOnly).toBe(true);
    expect(sts.spec.template.spec.volumes.find((v: any) => v.name === mount.name).configMap.name).toBe("nats-config");
  });

  it("gives the NATS pods every password nats.conf names, from the Secret ims-nats (a TEMPLATE value each)", () => {
    expect(confUsers.map((u) => u.user).sort()).toEqual([...ALL_SERVICES, "repl"].sort());
    expect(sts.spec.template.spec.containers[0].envFrom).toEqual([{ secretRef: { name: "ims-nats" } }]);
    for (const { variable } of confUsers) expect(busSecret.stringData[variable]).toMatch(/^change-me-/);
    expect(busSecret.stringData.NATS_ROUTE_PASSWORD).toMatch(/^change-me-/);
  });

  it.each([...ALL_SERVICES])("joins %s to the bus as its own NATS user, its password its own key of ims-nats, and to Redis with the password", (name) => {
    const [c] = find(base, "Deployment", name)!.spec.template.spec.containers;
    expect(envOf(c).NATS_USER).toBe(name);
    expect(c.env.find((e: any) => e.name === "NATS_PASSWORD")).toEqual({
      name: "NATS_PASSWORD",
      valueFrom: { secretKeyRef: { name: "ims-nats", key: `NATS_PASSWORD_${name.toUpperCase()}` } },
    });
    // ims-nats by key only: a service's pod holds no other service's password.
    expect(c.envFrom.some((f: any) => f.secretRef?.name === "ims-nats")).toBe(false);
    // TRANSPORTER from the ConfigMap, REDIS_URL (with its password) from the Secret (the notebooks pod's own), both by envFrom.
    expect(c.envFrom).toEqual([{ configMapRef: { name: "ims-config" } }, { secretRef: { name: name === "notebooks" ? "ims-notebooks" : "ims-secrets" } }]);
  });

  it("lets no pod but NATS's take the bus's Secret whole", () => {
    for (const dir of DIRS) {
      for (const o of rendered[dir]!) {
        for (const c of o.spec?.template?.spec?.containers ?? []) {
          if (o.metadata.name === "nats") continue;
          expect([o.metadata.name, (c.envFrom ?? []).map((f: any) => f.secretRef?.name)]).not.toEqual([o.metadata.name, expect.arrayContaining(["ims-nats"])]);
        }
      }
    }
  });

  it("runs Redis with requirepass from the Secret, the probes signing in and wanting PONG", () => {
    const [c] = find(base, "StatefulSet", "redis")!.spec.template.spec.containers;
    expect(c.args[c.args.indexOf("--requirepass") + 1]).toBe("$(REDIS_PASSWORD)");
    for (const name of ["REDIS_PASSWORD", "REDISCLI_AUTH"]) {
      expect(c.env).toContainEqual({ name, valueFrom: { secretKeyRef: { name: "ims-secrets", key: "REDIS_PASSWORD" } } });
    }
    for (const probe of [c.readinessProbe, c.livenessProbe]) expect(probe.exec.command).toEqual(["sh", "-c", "redis-cli ping | grep -q PONG"]);
  });
});

describe("overlays", () => {
  it("small runs one replica of each service and autoscales from 1 to 3", () => {
    const small = rendered["overlays/small"]!;
    for (const d of all(small, "Deployment")) expect(d.spec.replicas).toBe(1);
    for (const h of all(small, "HorizontalPodAutoscaler")) expect([h.spec.minReplicas, h.spec.maxReplicas]).toEqual([1, 3]);
    expect(find(small, "StatefulSet", "postgres")!.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe("5Gi");
  });

  it.each(DIRS)("%s keeps NATS at 3 nodes and the streams on as many replicas", (dir) => {
    const objs = rendered[dir]!;
    expect(find(objs, "StatefulSet", "nats")!.spec.replicas).toBe(3);
    expect(find(objs, "ConfigMap", "ims-config")!.data.STREAM_REPLICAS).toBe("3");
  });

  it("large scales out, with notebooks on a shared volume", () => {
    const large = rendered["overlays/large"]!;
    expect(find(large, "Deployment", "api")!.spec.replicas).toBe(4);
    for (const h of all(large, "HorizontalPodAutoscaler")) expect(h.spec.maxReplicas).toBe(20);
    expect(find(large, "Deployment", "pipelines")!.spec.template.spec.containers[0].resources.limits.cpu).toBe("2");
    expect(find(large, "PersistentVolumeClaim", "notebooks")!.spec.accessModes).toEqual(["ReadWriteMany"]);
    expect(find(large, "Deployment", "notebooks")!.spec.replicas).toBe(2);
  });
});
