/**
 * Notebook file names and folders. Pure: every name a caller gives is checked here, so that no
 * request can read or write outside the caller's own folder under NOTEBOOKS_DIR.
 */
import path from "node:path";

export const EXTENSION = ".ipynb";
/** The executed copy sits beside its source as `<stem>.executed.ipynb`; callers may not take such names. */
export const EXECUTED_SUFFIX = ".executed.ipynb";
/** Longest file name most file systems take (NAME_MAX), in bytes. */
export const MAX_NAME_BYTES = 255;

const SAFE_FOLDER_CHAR = /[a-z0-9._@+-]/;

/**
 * The folder of a user: the username with every other character percent-encoded, so an email
 * address stays readable and a `/` or `..` in a username can never climb out of NOTEBOOKS_DIR.
 */
export function userFolder(username: string): string {
  let out = "";
  for (const ch of username.toLowerCase()) {
    out += SAFE_FOLDER_CHAR.test(ch)
      ? ch
      : [...Buffer.from(ch, "utf8")].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");
  }
  return out === "" || /^\.+$/.test(out) ? out.replace(/\./g, "%2E") || "%00" : out;
}

/** Jupyter's naming of new notebooks: Untitled.ipynb, then Untitled1.ipynb, Untitled2.ipynb, … */
export function untitledName(taken: ReadonlySet<string>): string {
  for (let i = 0; ; i++) {
    const name = `Untitled${i === 0 ? "" : i}${EXTENSION}`;
    if (!taken.has(name)) return name;
  }
}

/** `.ipynb` is added when missing (in a rename's body). */
export function withExtension(name: string): string {
  return name.endsWith(EXTENSION) ? name : name + EXTENSION;
}

/** Why a notebook name is refused, or null when it is a plain file name inside the user's folder. */
export function nameProblem(name: string): string | null {
  if (name.includes("\0")) return "contains a NUL byte";
  if (/[\u0000-\u001f\u007f]/.test(name)) return "contains a control character";
  if (name.includes("/") || name.includes("\\")) return "contains a path separator";
  if (name.startsWith(".")) return "starts with a dot";
  if (name === EXTENSION || name.trim() !== name) return "is empty or has surrounding spaces";
  if (!name.endsWith(EXTENSION)) return `does not end in ${EXTENSION}`;
  if (name.endsWith(EXECUTED_SUFFIX)) return `ends in ${EXECUTED_SUFFIX}, the name of executed copies`;
  if (Buffer.byteLength(name, "utf8") > MAX_NAME_BYTES) return `is longer than ${MAX_NAME_BYTES} bytes`;
  return null;
}

export function executedName(name: string): string {
  return name.slice(0, -EXTENSION.length) + EXECUTED_SUFFIX;
}

/** The path of a notebook relative to NOTEBOOKS_DIR, as the API shows it (`attributes.path`). */
export function relativePath(username: string, name: string): string {
  return `${userFolder(username)}/${name}`;
}

/**
 * The absolute path of a file in a user's folder. The name was checked by `nameProblem`; this is
 * the second lock on the door: a path that resolves outside the folder is never returned.
 */
export function pathInFolder(root: string, username: string, name: string): string {
  const folder = path.resolve(root, userFolder(username));
  const full = path.resolve(folder, name);
  if (path.dirname(full) !== folder) throw new Error(`notebook path escapes its folder: ${name}`);
  return full;
}
