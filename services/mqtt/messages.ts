/** The texts the mqtt service writes to its log, one table (docs/sparkplug.md). */
import type { Violation } from "./packet-guard";

const VIOLATIONS: Record<Violation["kind"], (why: Violation, max: number) => string> = {
  "too large": (why, max) => `a packet of ${"bytes" in why ? why.bytes : "?"} bytes announced, over MQTT_MAX_PACKET_BYTES (${max})`,
  malformed: () => "a malformed remaining length",
  "not CONNECT first": () => "its first packet is no CONNECT",
  "too much before CONNECT accepted": (_why, max) => `more than MQTT_MAX_PACKET_BYTES (${max}) bytes sent before its CONNECT was accepted`,
};

export const MSG = {
  frontDoorListening: (port: number, hostId: string) => `MQTT front door (Sparkplug B) on port ${port}, host id ${hostId}`,
  frontDoorPortTaken: (port: number) => `MQTT front door not started: port ${port} is taken (set MQTT_PORT to a free port, 0 for none); the rest of the service runs`,
  frontDoorUnavailable: (why: string) => `MQTT front door not started: ${why}; the rest of the service runs`,
  connectionClosed: (remote: string, why: Violation, max: number) => `MQTT connection from ${remote} closed: ${VIOLATIONS[why.kind](why, max)}`,
  connectRefused: (username: string) => `MQTT CONNECT refused: wrong pipeline id or ingest key (username "${username}")`,
  publishDropped: (pipeline_id: string, topic: string) => `MQTT publish of pipeline ${pipeline_id} to "${topic}" dropped: a gateway publishes under its own edge node only`,
  subscribeRefused: (pipeline_id: string, topic: string) => `MQTT subscription of pipeline ${pipeline_id} to "${topic}" refused: its own edge node and spBv1.0/STATE/+ only`,
  undecodable: (edge_node: string, topic: string) => `Sparkplug node ${edge_node}: "${topic}" is no Sparkplug B payload; dropped`,
  rebirthAsked: (edge_node: string, why: string) => `Sparkplug node ${edge_node}: ${why}, rebirth requested`,
  rejected: (edge_node: string, counts: string) => `Sparkplug node ${edge_node}: metrics rejected: ${counts}`,
  storeFailed: (edge_node: string, why: string) => `Sparkplug node ${edge_node}: message not stored (${why}); not acknowledged, the node sends it again`,
  notReleased: (edge_node: string) => `Sparkplug node ${edge_node}: connection closed after a message not stored; not a release, a pending stop stays pending`,
  absentFailed: (edge_node: string, why: string) => `Sparkplug node ${edge_node}: its disconnection not told to PostgreSQL (${why}); told once this replica's connection is made again`,
  releaseFailed: (edge_node: string, why: string) => `Sparkplug node ${edge_node}: its release not recorded (${why}); a pending stop stays pending`,
  hostConnected: (url: string, hostId: string) => `Sparkplug host ${hostId} on ${url}`,
  hostStoreFailed: (edge_node: string, why: string) => `Sparkplug node ${edge_node}: message not stored (${why}); the replica that takes the node over replays what it kept`,
  hostLeasesNotTaken: (why: string) => `Sparkplug host: leases not taken (${why}); tried again shortly`,
  hostUnknownNode: (edge_node: string) => `Sparkplug node ${edge_node} names no edge pipeline of MQTT_SITES; its messages are ignored`,
} as const;
