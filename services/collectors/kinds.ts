/**
 * A collector per kind of source (`data_source_subtype`): what starts the collection of one
 * pipeline. A kind without one (null) is not listed, taken or touched, and the start log says so once.
 */
import type { StartCollector } from "./collector";
import { startOpcuaCollector } from "./opcua-collector";
import { startSqlCollector } from "./sql-collector";

export const COLLECTORS: Record<string, StartCollector | null> = {
  SQL: startSqlCollector,
  "OPC-UA": startOpcuaCollector,
};

/** The subtypes this build collects. */
export const COLLECTED_SUBTYPES = Object.entries(COLLECTORS).flatMap(([subtype, start]) => (start ? [subtype] : []));
export const UNAVAILABLE_SUBTYPES = Object.entries(COLLECTORS).flatMap(([subtype, start]) => (start ? [] : [subtype]));

export function collectorOf(subtype: string): StartCollector | null {
  return COLLECTORS[subtype.toUpperCase()] ?? null;
}
