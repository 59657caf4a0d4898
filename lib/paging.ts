/**
 * The contract's optional paging of every list operation: `limit` (1..1000) and `offset` in the
 * query, the total in the X-Total-Count response header, the page in the body.
 */
import type { Context } from "moleculer";
import type { FieldDoc } from "./operations";

export interface Page {
  limit?: number;
  offset?: number;
}

/** The params of a list action that pages. */
export const PAGE_PARAMS = {
  limit: { type: "number", integer: true, min: 1, max: 1000, convert: true, optional: true },
  offset: { type: "number", integer: true, min: 0, convert: true, optional: true },
} as const;

/** How the docs describe PAGE_PARAMS. */
export const PAGE_FIELDS: Record<keyof typeof PAGE_PARAMS, FieldDoc> = {
  limit: { description: "most items in the answer, 1 to 1000 (default: all); the total is in the X-Total-Count header", example: 50 },
  offset: { description: "items skipped before the first one answered (default 0)", example: 0 },
};

/** Puts a list's total in the X-Total-Count header of the answer (the gateway sends `$responseHeaders`). */
export function setTotal(ctx: Pick<Context, "meta">, total: number): void {
  const meta = ctx.meta as { $responseHeaders?: Record<string, string> };
  meta.$responseHeaders = { ...meta.$responseHeaders, "X-Total-Count": String(total) };
}

/** The page of a list held whole. */
export function slicePage<T>(items: T[], page: Page): T[] {
  const offset = page.offset ?? 0;
  return page.limit === undefined && offset === 0 ? items : items.slice(offset, offset + (page.limit ?? items.length));
}

/** The page of a list held whole, its total in the header. */
export function pageOf<T>(ctx: Pick<Context, "meta">, items: T[], page: Page): T[] {
  setTotal(ctx, items.length);
  return slicePage(items, page);
}
