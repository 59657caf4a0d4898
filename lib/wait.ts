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

/** Waits that `wake()` ends at once: a background loop's pause between rounds, ended by its stop. */
export class Pause {
  private waking: (() => void) | null = null;

  wait(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.end(resolve), ms);
      this.waking = () => {
        clearTimeout(timer);
        this.end(resolve);
      };
    });
  }

  /** Ends the wait under way, if any. */
  wake(): void {
    this.waking?.();
  }

  private end(resolve: () => void): void {
    this.waking = null;
    resolve();
  }
}
