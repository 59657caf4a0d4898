/** config's migrations, in the order they run (a migration's name is what the database recorded: it never changes). */
import { sitesPlants } from "./0001-sites-plants";
import { functionsAssetsMonitors } from "./0002-functions-assets-monitors";
import { auditTrail } from "./0003-audit-trail";
import { auditViaToken } from "./0004-audit-via-token";
import { pipelinePlaces } from "./0005-pipeline-places";

export const migrations = [sitesPlants, functionsAssetsMonitors, auditTrail, auditViaToken, pipelinePlaces];
