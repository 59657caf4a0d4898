import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "data/", "coverage/", "test/artifacts/", "**/*.js", "!console/**/*.js", "**/*.mjs"] },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["test/**/*.ts", "bench/**/*.ts", "scripts/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    // The console's modules run in the browser as they are (no build): the checks that need no types.
    files: ["console/**/*.js"],
    languageOptions: {
      sourceType: "module",
      globals: Object.fromEntries(
        ["window", "document", "location", "history", "navigator", "fetch", "URL", "URLSearchParams", "FormData", "Blob", "ResizeObserver",
         "MutationObserver", "AbortController", "requestAnimationFrame", "cancelAnimationFrame", "performance", "devicePixelRatio",
         "setTimeout", "clearTimeout", "setInterval", "clearInterval", "console", "confirm", "alert", "getComputedStyle",
         "matchMedia", "localStorage", "sessionStorage", "HTMLElement", "Event", "CustomEvent", "structuredClone", "Intl", "queueMicrotask"].map((g) => [g, "readonly"]),
      ),
    },
    rules: { "no-undef": "error", eqeqeq: ["error", "smart"], "no-unreachable": "error", "no-dupe-keys": "error" },
  },
);
