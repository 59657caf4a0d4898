/**
 * The consumer groups of each durable stream, declared once: a group listed here has its durable
 * consumer(s) made together with the stream, so a message published before the group's service
 * first subscribes is kept for it (the streams keep a message until every group has taken it:
 * docs/architecture.md, "The stream as a conveyor"). A service that starts reading a stream adds
 * its group here, beside the `group:` of its StreamConsumers; a group missing from the list gets
 * its consumer only at its first subscribe (logged), and what was published before is not its.
 *
 * A stream not listed (tests' own streams) keeps every message until STREAM_MAX_AGE_S, as all
 * streams did before the conveyor, since no one can say when every group has taken it.
 */
export const STREAM_GROUPS: Readonly<Record<string, readonly string[]>> = {
  /** services/alerting/evaluation.actions.ts, services/cm/cm.service.ts, services/ems/ems.service.ts */
  readings: ["alerting", "cm", "ems"],
  /** services/cm/cm.service.ts */
  waveforms: ["cm"],
  /** services/notifier/alerts.actions.ts */
  alerts: ["notifier"],
  /** services/config/audit.actions.ts (the trail's one writer) */
  audit: ["config"],
};

/** A stream's declared groups: those of `groups` (default STREAM_GROUPS); undefined for a stream not listed. */
export function groupsOf(stream: string, groups: Readonly<Record<string, readonly string[]>> = STREAM_GROUPS): readonly string[] | undefined {
  return Object.hasOwn(groups, stream) ? groups[stream] : undefined;
}

/** Said when a group reads a declared stream it is not listed for. */
export const undeclaredGroup = (stream: string, group: string): string =>
  `stream ${stream}: group ${group} is not among its groups (lib/streams/groups.ts): what the stream let go before its first subscribe is not kept for it`;
