/**
 * Small builders for the JSON Schemas of resources that services announce in their `openapi`
 * setting (`settings: { openapi: { schemas } }`), and that declarations name as `$Name`.
 */
export type JsonSchema = Record<string, unknown>;

export const str: JsonSchema = { type: "string" };
export const int: JsonSchema = { type: "integer" };
export const num: JsonSchema = { type: "number" };
export const bool: JsonSchema = { type: "boolean" };
export const nullable = (type: string): JsonSchema => ({ type: [type, "null"] });

export const obj = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({
  type: "object",
  properties,
  ...(required.length ? { required } : {}),
});
export const arr = (items: JsonSchema): JsonSchema => ({ type: "array", items });
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
export const strings = (...names: string[]): Record<string, JsonSchema> => Object.fromEntries(names.map((n) => [n, str]));
/** A number with its unit, which the docs show beside the type. */
export const measured = (type: "integer" | "number", unit: string, description?: string): JsonSchema => ({
  type,
  "x-unit": unit,
  ...(description ? { description } : {}),
});
