/**
 * An OPC-UA server of the tests' own (node-opcua-server), run as a child process with tsx (its
 * packages are ES modules, which Jest's loader does not load): `tsx test/helpers/opcua-server.ts
 * <port> <pkiDir>`. Namespace 1 holds Double variables `ns=1;s=Var0` .. `Var<N-1>` (N from
 * OPCUA_TEST_VARIABLES, 4 by default) that change every OPCUA_TEST_PERIOD_MS (100 by default):
 * Var<i> = i * 1000 + the number of changes so far. It accepts anonymous sessions only when
 * OPCUA_TEST_ANONYMOUS=1, else the user `opc` with password `opc-secret`. Each variable keeps
 * its last OPCUA_TEST_HISTORY values (2,000 by default; 0: no history) for history reads. Prints
 * `ready <port>` once it listens; stops on SIGTERM.
 */
import { mkdirSync } from "node:fs";

async function main(): Promise<void> {
  const port = Number(process.argv[2]);
  const pki = process.argv[3] ?? "/tmp/ims-opcua-test-pki";
  const count = Number(process.env.OPCUA_TEST_VARIABLES ?? 4);
  const period = Number(process.env.OPCUA_TEST_PERIOD_MS ?? 100);
  mkdirSync(pki, { recursive: true });
  const { OPCUAServer, OPCUACertificateManager } = await import("node-opcua-server").then(async (s) => ({
    ...s,
    OPCUACertificateManager: (await import("node-opcua-certificate-manager")).OPCUACertificateManager,
  }));
  const { DataType } = await import("node-opcua-client");
  const serverCertificateManager = new OPCUACertificateManager({ rootFolder: pki, automaticallyAcceptUnknownCertificate: true });
  const server = new OPCUAServer({
    port,
    serverCertificateManager,
    allowAnonymous: process.env.OPCUA_TEST_ANONYMOUS === "1",
    userManager: { isValidUser: (user: string, password: string) => user === "opc" && password === "opc-secret" },
    buildInfo: { productName: "ims-test-opcua" },
  });
  await server.initialize();
  const ns = server.engine.addressSpace!.getOwnNamespace();
  const folder = ns.addFolder(server.engine.addressSpace!.rootFolder.objects, { browseName: "Plant" });
  let changes = 0;
  const variables = Array.from({ length: count }, (_, i) =>
    ns.addVariable({ componentOf: folder, nodeId: `s=Var${i}`, browseName: `Var${i}`, dataType: "Double", value: { dataType: DataType.Double, value: i * 1000 } }),
  );
  const history = Number(process.env.OPCUA_TEST_HISTORY ?? 2000);
  if (history > 0) for (const v of variables) server.engine.addressSpace!.installHistoricalDataNode(v, { maxOnlineValues: history });
  const timer = setInterval(() => {
    changes += 1;
    variables.forEach((v, i) => v.setValueFromSource({ dataType: DataType.Double, value: i * 1000 + changes }));
  }, period);
  await server.start();
  process.stdout.write(`ready ${port}\n`);
  process.on("SIGTERM", () => {
    clearInterval(timer);
    void server.shutdown(0).then(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`opcua test server: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
