/** auth's migrations, in the order they run (a migration's name is what the database recorded: it never changes). */
import { init } from "./0001-init";
import { tokens } from "./0002-tokens";
import { auditOutbox } from "./0003-audit-outbox";
import { tokenIssuer } from "./0004-token-issuer";
import { runTokens } from "./0005-run-tokens";

export const migrations = [init, tokens, auditOutbox, tokenIssuer, runTokens];
