/**
 * Params fragments the config actions share (fastest-validator rules). Names are trimmed and
 * must not be empty; ids are checked for shape by the domain, so that a malformed one answers
 * the operation's own "Invalid ... ID" message rather than a validation error.
 */
import { PAGE_PARAMS } from "../../lib/paging";
import { MAX_TEXT } from "../../lib/validation";
import { MSG } from "./messages";

export const text = { type: "string", max: MAX_TEXT } as const;
export const optText = { ...text, optional: true } as const;
export const name = { type: "string", max: MAX_TEXT, trim: true, empty: false } as const;
export const id = text;
export const optId = optText;
export const page = PAGE_PARAMS;
/** A list or count names any key it does not take `Excess inputs`. */
export const list = { unknown: MSG.excessInputs } as const;

/**
 * Fields an update may carry because the fetch or list answered them, so that a record sent back
 * as it was read is taken: accepted, never written (names of parents, counts, server-kept times).
 */
export const readBack = <K extends string>(...names: K[]) =>
  Object.fromEntries(names.map((n) => [n, { type: "any", optional: true } as const])) as Record<K, { type: "any"; optional: true }>;
