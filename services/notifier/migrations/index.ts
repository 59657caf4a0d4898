/** The notifier's migrations, in the order they run (a migration's name is what the database recorded: it never changes). */
import { init } from "./0001-init";
import { newestFirst } from "./0002-newest-first";
import { contacts } from "./0003-contacts";

export const migrations = [init, newestFirst, contacts];
