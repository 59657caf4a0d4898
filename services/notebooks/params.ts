/** The params rules the notebooks' actions share. */
import { MAX_TEXT } from "../../lib/validation";

export const text = { type: "string", max: MAX_TEXT } as const;
export const idList = { type: "array", items: text, max: 1000 } as const;
