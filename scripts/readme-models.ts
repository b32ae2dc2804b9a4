// `npm run readme:models`: rewrites README.md's model table from server/models/known-models.ts
// (known-models.test.ts fails while the two disagree).
import { readFileSync, writeFileSync } from "node:fs";
import { readmeModelTable } from "../server/models/known-models";

const path = new URL("../README.md", import.meta.url);
const readme = readFileSync(path, "utf8");
const marked = /(<!-- models:start -->\n)[\s\S]*?(<!-- models:end -->)/;
if (!marked.test(readme)) throw new Error("README.md has no <!-- models:start --> … <!-- models:end --> block");
writeFileSync(path, readme.replace(marked, (_, start: string, end: string) => `${start}${readmeModelTable()}\n${end}`));
console.log("README.md: model table written");
