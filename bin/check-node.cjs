/*
 * Run first by `npm start` and `npm test`, before anything loads a native module: on a Node
 * older than package.json's engines (argon2's prebuilt binary needs Node 22, and on Node 20 the
 * process dies of a segmentation fault without a word; the historian's chunks need zlib's zstd,
 * which Node has from 22.15), one line says what is needed and how to get it, and the script exits 1. Plain CommonJS with nothing newer than Node 12, so that the
 * old Node it is there for can run it. `npm ci` is stopped the same way by engine-strict in .npmrc.
 */
"use strict";

const NEEDED = [22, 15];

/** The README's one line (Two commands), for this machine's platform and processor. */
function howToGetNode() {
  const platform = process.platform;
  if (platform !== "linux" && platform !== "darwin") return "nvm install 24, or https://nodejs.org";
  const pkg = "node-" + platform + "-" + process.arch + "@24";
  return (
    "mkdir -p ~/.cache/ims-node24 && (cd ~/.cache/ims-node24 && npm pack --silent " + pkg +
    " && tar xzf node-" + platform + "-" + process.arch + "-24.*.tgz) && export PATH=~/.cache/ims-node24/package/bin:$PATH"
  );
}

const found = process.versions.node;
const major = Number(found.split(".")[0]);
const minor = Number(found.split(".")[1]);
if (major < NEEDED[0] || (major === NEEDED[0] && minor < NEEDED[1])) {
  process.stderr.write(
    "This service needs Node.js " + NEEDED.join(".") + " or newer (found v" + found + "). Get Node 24: " + howToGetNode() + "\n",
  );
  process.exit(1);
}
