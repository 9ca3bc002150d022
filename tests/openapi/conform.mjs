// SPDX-License-Identifier: MIT
// Checks answers against schemas/openapi.yaml: each FILE is the JSON body of METHOD PATH
// answering STATUS, and must conform to that response's schema (components resolved).
// Usage: node tests/openapi/conform.mjs METHOD PATH STATUS FILE...   (exit 1 on a mismatch)
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import YAML from "yaml";

const [method, path, status, ...files] = process.argv.slice(2);
if (!files.length) {
    console.error("usage: conform.mjs METHOD PATH STATUS FILE...");
    process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const doc = YAML.parse(readFileSync(join(here, "../../schemas/openapi.yaml"), "utf8"));
const op = doc.paths?.[path]?.[method.toLowerCase()];
const schema = op?.responses?.[status]?.content?.["application/json"]?.schema;
if (!schema) {
    console.error(`no application/json schema for ${method} ${path} ${status}`);
    process.exit(2);
}
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: "api", components: doc.components });
// the response schema, its refs pointing into the components of "api"
const rewrite = (s) =>
    JSON.parse(JSON.stringify(s).replace(/"#\/components\//g, '"api#/components/'));
const check = ajv.compile(rewrite(schema));
let bad = 0;
for (const f of files) {
    const body = JSON.parse(readFileSync(f, "utf8"));
    if (!check(body)) {
        bad++;
        console.log(`FAIL ${f}: ${ajv.errorsText(check.errors, { separator: "; " })}`);
    }
}
process.exit(bad ? 1 : 0);
