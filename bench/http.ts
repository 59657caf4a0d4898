/** The benchmarks' requests to a cluster they started (test/helpers/cluster.ts). */
import type { HttpClient } from "../test/helpers/node";

/**
 * The answer's body of a request that must succeed, sent again while it answers 503: a process of
 * the cluster may not yet have learnt of the others (service discovery).
 */
export async function ok<T>(http: HttpClient, method: string, path: string, body: unknown): Promise<T> {
  let res = await http<T>(method, path, { body });
  for (let i = 0; i < 50 && res.status === 503; i++) {
    await new Promise((r) => setTimeout(r, 200));
    res = await http<T>(method, path, { body });
  }
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
