/**
 * Whether `p` settles (resolves or rejects) within `ms`. The timer is cleared as soon as it is
 * decided, so a pending wait never holds the process (or a jest worker) open.
 */
export async function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
