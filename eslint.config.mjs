// ESLint 9 flat config.
// - eslint-config-next 16 ships flat configs (arrays) that work with ESLint 9 as they are:
//   `core-web-vitals` = Next's base (react, react-hooks, import, jsx-a11y, @next/next) plus the
//   Core Web Vitals rules promoted to errors.
// - typescript-eslint's `recommended` (not type-aware: fast, and needs no tsconfig project).
import { defineConfig, globalIgnores } from "eslint/config";
import nextCoreWebVitals from "eslint-config-next/core-web-vitals";
import tseslint from "typescript-eslint";

// Elements only the kit's primitives render, by the file that owns each.
const KIT_ELEMENTS = { "components/ui/button.tsx": "button", "components/ui/field.tsx": "label" };
const kitElementsRule = (owner) => [
  "error",
  { forbid: Object.entries(KIT_ELEMENTS).filter(([file]) => file !== owner).map(([file, element]) => ({ element, message: `Use the primitive in ${file}.` })) },
];

export default defineConfig([
  globalIgnores([
    ".next/**",
    "node_modules/**",
    "server/db/generated/**",
    ".data/**",
    "test-results/**",
    "playwright-report/**",
    "reports/**",
    "next-env.d.ts",
    "**/*.tsbuildinfo",
  ]),
  ...nextCoreWebVitals,
  ...tseslint.configs.recommended,
  {
    name: "project/rules",
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          args: "after-used",
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          caughtErrors: "all",
          caughtErrorsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    name: "project/links",
    files: ["app/**", "components/**"],
    ignores: ["components/ui/link.tsx"],
    rules: {
      "no-restricted-imports": ["error", { paths: [{ name: "next/link", message: "Use components/ui/link.tsx (not prefetched: see there)." }] }],
    },
  },
  // The kit's primitives (components/ui/): a button or a label is assembled there, once, with
  // its variants; everywhere else uses the primitive. Each primitive's file renders its element.
  { name: "project/ui-kit", files: ["app/**/*.tsx", "components/**/*.tsx"], rules: { "react/forbid-elements": kitElementsRule(null) } },
  ...Object.keys(KIT_ELEMENTS).map((file) => ({ name: `project/ui-kit ${file}`, files: [file], rules: { "react/forbid-elements": kitElementsRule(file) } })),
  {
    // shared/ is what the browser and the server both load: it imports only zod and itself, so
    // nothing server-only (node:, the database, env, logging) can reach the bundle through it.
    name: "project/shared",
    files: ["shared/**"],
    ignores: ["shared/**/*.test.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ regex: "^(?!zod$|\\./)", message: "shared/ imports only zod and shared/ (it is loaded by the browser)." }] }],
    },
  },
  {
    // The browser takes only types from server/; values it shares with the server are in shared/.
    name: "project/browser",
    files: ["app/**", "components/**"],
    ignores: ["**/*.test.ts", "components/testing/**"],
    rules: {
      "@typescript-eslint/no-restricted-imports": ["error", { patterns: [{ group: ["~/server/*", "**/server/*"], allowTypeImports: true, message: "The browser imports only types from server/; move what it shares to shared/." }] }],
    },
  },
  {
    // Tests, scripts and configs are plain Node code: anonymous default exports (vitest's
    // globalSetup, config files) are the norm there.
    name: "project/node-files",
    files: [
      "**/*.test.ts",
      "scripts/**",
      "e2e/**",
      "bench/**",
      "server/testing/**",
      "*.config.{ts,mts,mjs,js}",
    ],
    rules: {
      "import/no-anonymous-default-export": "off",
    },
  },
]);
