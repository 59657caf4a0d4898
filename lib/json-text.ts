/**
 * A value that is answered many times as the same JSON (a cached list): frozen, with its JSON
 * text made once and kept beside it under a symbol, which no serializer or copy carries along.
 * The gateway, when it runs in the same process, sends that text instead of encoding the value
 * again (services/api/api.service.ts, `encodeResponse`); a value that crossed the bus, or was
 * copied or sliced, has no text and is encoded as usual. Frozen, so that the text can never
 * disagree with the value: a caller that tried to change it fails loudly.
 */
const JSON_TEXT = Symbol("ims.jsonText");

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return;
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  Object.freeze(value);
}

/** Freezes `value` (deeply) and gives it its JSON text, made on first use. */
export function withJsonText<T extends object>(value: T): T {
  if (Object.isFrozen(value)) return value;
  let text: string | undefined;
  Object.defineProperty(value, JSON_TEXT, { get: () => (text ??= JSON.stringify(value)) });
  deepFreeze(value);
  return value;
}

/** The JSON text `withJsonText` gave this very value, if any. */
export function jsonTextOf(value: unknown): string | undefined {
  return value !== null && typeof value === "object" ? ((value as { [JSON_TEXT]?: string })[JSON_TEXT] ?? undefined) : undefined;
}
