import type { MigrationInterface, QueryRunner } from "typeorm";

/*
 * The unique index of edge gateways' MAC addresses on what the code compares (pipelines.repo.ts,
 * `pipelineWithMac`): the address without separators, in lower case (`00:1B:44:11:3A:B7`,
 * `00-1b-44-11-3a-b7` and `001b44113ab7` are one gateway, one Sparkplug edge node); an address
 * with no hex digit as written, in lower case. The index on lower(mac_address) let two creates at
 * the same moment both pass the code's check with such addresses. Written out here, not taken
 * from the code: a migration stays what it was when it ran.
 */
const KEY = `(CASE WHEN regexp_replace(mac_address, '[^0-9A-Fa-f]', '', 'g') <> ''
                   THEN lower(regexp_replace(mac_address, '[^0-9A-Fa-f]', '', 'g'))
                   ELSE lower(mac_address) END)`;

export class PipelinesEdgeMacNormalised1767250000200 implements MigrationInterface {
  name = "PipelinesEdgeMacNormalised1767250000200";

  async up(qr: QueryRunner): Promise<void> {
    const clashes = (await qr.query(
      `SELECT string_agg(pipeline_id::text || ' (' || mac_address || ')', ', ' ORDER BY created_at) AS pipelines
         FROM pipelines WHERE kind = 'edge' GROUP BY ${KEY} HAVING count(*) > 1`,
    )) as { pipelines: string }[];
    if (clashes.length > 0) {
      // Nothing is deleted: the gateways stay as they are and so does the old index, until an operator decides.
      console.warn(
        `pipelines migration ${this.name}: edge pipelines share a MAC address once separators are removed: ` +
          `${clashes.map((c) => c.pipelines).join("; ")}. The unique index stays on lower(mac_address); give each its own MAC address, ` +
          `then run: DROP INDEX pipelines.pipelines_edge_mac; CREATE UNIQUE INDEX pipelines_edge_mac ON pipelines.pipelines (${KEY.replace(/\s+/g, " ")}) WHERE kind = 'edge'`,
      );
      return;
    }
    await qr.query(`DROP INDEX pipelines_edge_mac`);
    // The same name: a unique violation of it is the MAC message (pipelines.repo.ts, `isMacTaken`).
    await qr.query(`CREATE UNIQUE INDEX pipelines_edge_mac ON pipelines (${KEY}) WHERE kind = 'edge'`);
  }

  async down(qr: QueryRunner): Promise<void> {
    await qr.query(`DROP INDEX pipelines_edge_mac`);
    await qr.query(`CREATE UNIQUE INDEX pipelines_edge_mac ON pipelines (lower(mac_address)) WHERE kind = 'edge'`);
  }
}
