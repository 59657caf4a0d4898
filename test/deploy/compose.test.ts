/**
 * docker-compose.yml, .env.example and the Dockerfile, read as files: no Docker engine runs here,
 * so these checks are what keeps them in step with the code (services, ports, variables, files).
 */
import fs from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { ALL_SERVICES } from "../../lib/config";

const ROOT = path.resolve(__dirname, "../..");
const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), "utf8");

interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test?: string[]; disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
  env_file?: string;
  profiles?: string[];
  networks?: string[];
  user?: string;
  cap_drop?: string[];
  cap_add?: string[];
  security_opt?: string[];
}
interface Compose {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
  networks?: Record<string, { internal?: boolean }>;
}

const compose = parse(read("docker-compose.yml"), { merge: true }) as Compose;
const DB_SERVICES = ALL_SERVICES.filter((s) => s !== "api");
const NATS_NODES = ["nats-1", "nats-2", "nats-3"];
const ROUTE_AUTH = "route:${NATS_ROUTE_PASSWORD:?set NATS_ROUTE_PASSWORD in .env}";
/** Every process that joins the bus: each service, and the REPL. */
const BUS_USERS = [...ALL_SERVICES, "repl"];
const required = (name: string): string => `\${${name}:?set ${name} in .env}`;
const natsConf = read("deploy/nats/nats.conf");
/** deploy/nats/nats.conf's users: name and the environment variable of its password. */
const confUsers = [...natsConf.matchAll(/\{\s*user:\s*([a-z]+),\s*password:\s*\$([A-Z0-9_]+)\s*\}/g)].map((m) => ({ user: m[1]!, variable: m[2]! }));

describe("docker-compose.yml", () => {
  it("runs NATS with JetStream, PostgreSQL and Redis, each with a health check and a volume", () => {
    const { postgres, redis } = compose.services;
    for (const infra of [...NATS_NODES.map((n) => compose.services[n]), postgres, redis]) {
      expect(infra?.healthcheck?.test?.length).toBeGreaterThan(0);
      // One named volume for its data (NATS also mounts its config file, read-only).
      expect(infra?.volumes?.filter((v) => !v.startsWith("./"))).toHaveLength(1);
    }
  });

  it("runs NATS as a 3-node JetStream cluster, each node named, routed to all three, on a volume of its own", () => {
    const flag = (cmd: string[], name: string) => cmd[cmd.indexOf(name) + 1];
    const routes = NATS_NODES.map((n) => `nats://${ROUTE_AUTH}@${n}:6222`);
    for (const name of NATS_NODES) {
      const cmd = compose.services[name]!.command!;
      expect(cmd).toContain("-js");
      expect(flag(cmd, "--server_name")).toBe(name);
      expect(flag(cmd, "--cluster_name")).toBe("ims");
      // The routes sign in: coming in (the --cluster URL's user) and going out (the --routes URLs').
      expect(flag(cmd, "--cluster")).toBe(`nats://${ROUTE_AUTH}@0.0.0.0:6222`);
      expect(flag(cmd, "--routes")!.split(",")).toEqual(routes);
    }
    const volumes = NATS_NODES.map((n) => compose.services[n]!.volumes![0]!.split(":")[0]);
    expect(new Set(volumes).size).toBe(NATS_NODES.length);
    expect(compose.services.nats).toBeUndefined();
  });

  it.each([...ALL_SERVICES])("runs %s in a container of its own from the one image, health-checked, after the migrations", (name) => {
    const svc = compose.services[name];
    expect(svc).toBeDefined();
    expect(svc!.image).toBe(compose.services.api!.image);
    expect(svc!.environment?.SERVICES).toBe(name);
    expect(svc!.environment?.TRANSPORTER).toBe(NATS_NODES.map((n) => `nats://${n}:4222`).join(","));
    expect(svc!.environment?.STREAM_REPLICAS).toBe("3");
    expect(svc!.environment?.REDIS_URL).toBe(`redis://:${required("REDIS_PASSWORD")}@redis:6379`);
    expect(svc!.environment?.DATABASE_URL).toMatch(/^postgres:\/\/ims:.*@postgres:5432\/ims$/);
    expect(svc!.env_file).toBe(".env");
    const port = svc!.environment?.HEALTH_PORT;
    expect(svc!.healthcheck?.test?.join(" ")).toContain(`http://127.0.0.1:${port}/ready`);
    expect(svc!.depends_on).toEqual({
      "nats-1": { condition: "service_healthy" },
      "nats-2": { condition: "service_healthy" },
      "nats-3": { condition: "service_healthy" },
      postgres: { condition: "service_healthy" },
      redis: { condition: "service_healthy" },
      migrate: { condition: "service_completed_successfully" },
    });
  });

  it("lets no process reach NATS or Redis without credentials: a NATS user each, the Redis password in every REDIS_URL", () => {
    for (const [name, svc] of Object.entries(compose.services)) {
      const env = svc.environment ?? {};
      if (env.TRANSPORTER) {
        expect([name, env.NATS_USER]).toEqual([name, name]);
        expect([name, env.NATS_PASSWORD]).toEqual([name, required(`NATS_PASSWORD_${name.toUpperCase()}`)]);
      }
      if (env.REDIS_URL) expect([name, env.REDIS_URL]).toEqual([name, `redis://:${required("REDIS_PASSWORD")}@redis:6379`]);
    }
    const joining = Object.entries(compose.services).filter(([, svc]) => svc.environment?.TRANSPORTER).map(([name]) => name);
    expect(joining.sort()).toEqual([...BUS_USERS].sort());
    // Migrations touch PostgreSQL only.
    expect(compose.services.migrate!.environment).toMatchObject({ TRANSPORTER: "", REDIS_URL: "" });
  });

  it("runs NATS with deploy/nats/nats.conf, read-only: a user per process that joins the bus, each password from the environment compose sets from .env", () => {
    expect(confUsers.map((u) => u.user).sort()).toEqual([...BUS_USERS].sort());
    expect(natsConf).not.toMatch(/no_auth_user/);
    for (const name of NATS_NODES) {
      const nats = compose.services[name]!;
      expect(nats.command!.slice(0, 2)).toEqual(["-c", "/etc/nats/nats.conf"]);
      expect(nats.volumes).toContain("./deploy/nats/nats.conf:/etc/nats/nats.conf:ro");
      for (const { variable } of confUsers) expect(nats.environment?.[variable]).toBe(required(variable));
    }
    for (const { user, variable } of confUsers) expect(variable).toBe(`NATS_PASSWORD_${user.toUpperCase()}`);
  });

  it("runs Redis with a password (REDIS_PASSWORD), and its health check signs in and wants PONG", () => {
    const redis = compose.services.redis!;
    const cmd = redis.command!;
    expect(cmd[cmd.indexOf("--requirepass") + 1]).toBe(required("REDIS_PASSWORD"));
    expect(redis.environment?.REDISCLI_AUTH).toBe(required("REDIS_PASSWORD"));
    expect(redis.healthcheck?.test).toEqual(["CMD-SHELL", "redis-cli ping | grep -q PONG"]);
  });

  it("asks .env.example for every password of the bus and the cache, each of the form nats.conf reads bare", () => {
    const example = Object.fromEntries(
      read(".env.example")
        .split("\n")
        .map((l) => /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(l))
        .filter((m): m is RegExpExecArray => Boolean(m))
        .map((m) => [m[1]!, m[2]!]),
    );
    for (const name of ["REDIS_PASSWORD", "NATS_ROUTE_PASSWORD", ...confUsers.map((u) => u.variable)]) {
      expect([name, example[name]]).toEqual([name, expect.stringMatching(/^[A-Za-z][A-Za-z0-9_-]*$/)]);
    }
  });

  it("publishes the api on port 3000 and the MQTT front door on 1883, and no other service", () => {
    expect(compose.services.api!.environment?.PORT).toBe("3000");
    expect(compose.services.api!.ports).toEqual(["${API_PORT:-3000}:3000"]);
    expect(compose.services.mqtt!.environment?.MQTT_PORT).toBe("1883");
    expect(compose.services.mqtt!.ports).toEqual(["${MQTT_FRONT_DOOR_PORT:-1883}:1883"]);
    for (const name of ALL_SERVICES.filter((s) => s !== "api" && s !== "mqtt")) expect(compose.services[name]!.ports).toBeUndefined();
  });

  it("migrates every schema once before the services, with MIGRATE_ONLY=1", () => {
    const migrate = compose.services.migrate!;
    expect(migrate.environment?.MIGRATE_ONLY).toBe("1");
    expect(migrate.environment?.SERVICES?.split(",").sort()).toEqual([...DB_SERVICES].sort());
  });

  it("declares every named volume it mounts", () => {
    const used = Object.values(compose.services)
      .flatMap((s) => s.volumes ?? [])
      .map((v) => v.split(":")[0]!)
      .filter((v) => !v.startsWith(".") && !v.startsWith("/"));
    expect(new Set(used)).toEqual(new Set(Object.keys(compose.volumes)));
  });

  it("takes every variable it requires from the env file that .env.example describes", () => {
    const text = read("docker-compose.yml");
    const required = [...text.matchAll(/\$\{([A-Z0-9_]+)(:?\?[^}]*)?\}/g)].map((m) => m[1]!);
    const example = new Set(
      read(".env.example")
        .split("\n")
        .map((l) => /^#?\s*([A-Z][A-Z0-9_]*)=/.exec(l)?.[1])
        .filter(Boolean),
    );
    expect(required.length).toBeGreaterThan(0);
    for (const name of required) expect(example).toContain(name);
  });

  it("names in .env.example and the Kubernetes Secret only variables the service reads or compose uses", () => {
    const config = read("lib/config.ts");
    const serviceReads = new Set([...config.matchAll(/\(env, "([A-Z0-9_]+)"/g)].map((m) => m[1]!));
    const composeUses = new Set([...read("docker-compose.yml").matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1]!));
    const named = (text: string, line: RegExp): string[] =>
      text
        .split("\n")
        .map((l) => line.exec(l)?.[1])
        .filter((n): n is string => Boolean(n));
    const names = [
      ...named(read(".env.example"), /^#?\s*([A-Z][A-Z0-9_]*)=/),
      ...named(read("k8s/base/secret.yaml"), /^\s+([A-Z][A-Z0-9_]*):/),
    ];
    expect(names).toContain("TWILIO_SMS_FROM");
    expect(names.filter((n) => !serviceReads.has(n) && !composeUses.has(n))).toEqual([]);
  });

  it("runs the REPL as a one-off tool container", () => {
    expect(compose.services.repl!.profiles).toEqual(["tools"]);
    expect(compose.services.repl!.command).toEqual(["node", "--import", "tsx", "bin/repl.ts"]);
  });
});

/** The relative imports reachable from an entry file: the files the image must contain. */
function importClosure(entry: string, seen = new Set<string>()): Set<string> {
  if (seen.has(entry)) return seen;
  seen.add(entry);
  const source = fs.readFileSync(entry, "utf8");
  for (const m of source.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
    const base = path.resolve(path.dirname(entry), m[1]!);
    const file = [base, `${base}.ts`, path.join(base, "index.ts")].find((f) => fs.existsSync(f) && fs.statSync(f).isFile());
    if (file) importClosure(file, seen);
  }
  return seen;
}

describe("Dockerfile", () => {
  const dockerfile = read("Dockerfile");
  const ignored = read(".dockerignore")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#") && !l.startsWith("!"));

  it("is multi-stage on Node 24 slim, installs production dependencies only and runs as a non-root user", () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-[a-z]+-slim$/m);
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^CMD \["node", "--import", "tsx", "bin\/start.ts"\]$/m);
  });

  it("copies every file that bin/start.ts and bin/repl.ts import, and .dockerignore keeps none of them out", () => {
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));
    const needed = new Set<string>();
    for (const entry of ["bin/start.ts", "bin/repl.ts"]) {
      for (const file of importClosure(path.join(ROOT, entry))) needed.add(path.relative(ROOT, file).split(path.sep)[0]!);
    }
    expect(needed.size).toBeGreaterThan(3);
    for (const top of needed) {
      expect(copied).toContain(top);
      expect(ignored).not.toContain(top);
    }
  });
});

describe("docker-compose.yml's notebooks container, the runs' sandbox", () => {
  it("runs the pod sandbox as root with six capabilities and no new privileges", () => {
    const nb = compose.services.notebooks!;
    expect(nb.environment?.NOTEBOOK_SANDBOX).toBe("pod");
    expect(nb.environment?.NOTEBOOK_API_URL).toBe("http://api:3000");
    expect(nb.user).toBe("0");
    expect(nb.cap_drop).toEqual(["ALL"]);
    expect(nb.cap_add).toEqual(["CHOWN", "FOWNER", "DAC_OVERRIDE", "SETUID", "SETGID", "KILL"]);
    expect(nb.security_opt).toContain("no-new-privileges:true");
  });

  it("is on an internal network alone, shared with the api, PostgreSQL, NATS and Redis only", () => {
    expect(compose.services.notebooks!.networks).toEqual(["notebooks"]);
    expect(compose.networks?.notebooks?.internal).toBe(true);
    const members = Object.entries(compose.services).filter(([, svc]) => svc.networks?.includes("notebooks")).map(([name]) => name).sort();
    expect(members).toEqual(["api", "nats-1", "nats-2", "nats-3", "notebooks", "postgres", "redis"]);
  });
});
