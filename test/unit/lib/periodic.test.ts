/** mixins/periodic.mixin.ts: jobs run on their interval once the service started, never overlap, survive failures and stop with it. */
import { ServiceBroker, type Service, type ServiceSchema } from "moleculer";
import { PeriodicMixin, type PeriodicJobs } from "../../../mixins/periodic.mixin";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it("runs each job on its interval, one run at a time, until the service stops", async () => {
  const seen = { runs: 0, running: 0, most: 0, failures: 0, afterStop: 0, startedBeforeRun: true };
  let stopped = false;
  let ready = false;
  const jobs: PeriodicJobs<Service> = {
    slow: {
      everyMs: 5,
      async run() {
        if (stopped) seen.afterStop++;
        if (!ready) seen.startedBeforeRun = false;
        seen.runs++;
        seen.running++;
        seen.most = Math.max(seen.most, seen.running);
        await sleep(30);
        seen.running--;
      },
    },
    failing: {
      everyMs: () => 5,
      run() {
        seen.failures++;
        return Promise.reject(new Error("down"));
      },
    },
  };
  const broker = new ServiceBroker({ logger: false });
  broker.createService({
    name: "clock",
    mixins: [PeriodicMixin()],
    jobs,
    async started() {
      await sleep(20);
      ready = true;
    },
  } as ServiceSchema & { jobs: PeriodicJobs<Service> });
  await broker.start();
  await sleep(120);
  await broker.stop();
  stopped = true;
  const runs = seen.runs;
  await sleep(30);
  expect(seen.startedBeforeRun).toBe(true);
  expect(runs).toBeGreaterThanOrEqual(2);
  expect(seen.most).toBe(1);
  expect(seen.running).toBe(0);
  expect(seen.failures).toBeGreaterThanOrEqual(2);
  expect(seen.runs).toBe(runs);
  expect(seen.afterStop).toBe(0);
});
