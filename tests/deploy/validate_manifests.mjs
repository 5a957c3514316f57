// Validates every YAML document in DIR/**/*.yaml (deploy/kubernetes) against the Kubernetes API schema, offline:
//   node validate_manifests.mjs DIR_OR_FILE NODE_MODULES
//   node validate_manifests.mjs --expect-fail TESTDATA_DIR NODE_MODULES
// NODE_MODULES holds the exact versions pinned in package.json beside this file (the deploy_schema_deps_install
// test installs them). Core kinds are checked by kubernetes-models' precompiled JSON-schema validators, made strict
// (an unknown field is an error, as `kubectl --validate=strict` makes it); custom resources (agent-sandbox,
// security-profiles-operator) have no schema there: CUSTOM_KINDS below lists each field they may have, and the core
// types they embed (a SandboxTemplate's pod spec...) go through the core validators. A kind in neither is a
// failure. One line per document; exit 0 when all are valid, 1 when any is not, 2 on a setup error.
// --expect-fail runs this script on each TESTDATA_DIR/*.yaml alone and passes only if every run exits 1 and prints
// each error its file names in a `# expect-error: TEXT` line.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const SELF = fileURLToPath(import.meta.url);
const PINNED = JSON.parse(readFileSync(path.join(path.dirname(SELF), "package.json"), "utf8")).dependencies;
// The Kubernetes release each kubernetes-models version was generated from (its CHANGELOG): bump both together.
const KUBERNETES_OF_MODELS = { "5.1.0": "v1.36.0" };

class SetupError extends Error {}

// ---------------------------------------------------------------------------------------------------------------
// Custom resources: every field each kind may carry in a manifest, transcribed from the CRDs of the release named
// in `source` (status is the controller's, so it is not accepted here). `core(...)` hands a value to the Kubernetes
// schema. Keep in step with the CRDs when moving to a new release of the operator.
const str = { type: "string" };
const bool = { type: "boolean" };
const dateTime = { type: "string", format: "date-time" };
const oneOf = (...values) => ({ type: "string", enum: values });
const int32 = (minimum) => ({ type: "integer", bits: 32, minimum });
const int64 = (minimum) => ({ type: "integer", bits: 64, minimum });
const arrayOf = (items, limits = {}) => ({ type: "array", items, ...limits });
const object = (properties, required = []) => ({ type: "object", properties, required });
const mapOf = (values) => ({ type: "object", additionalProperties: values });
const core = (apiVersion, kind) => ({ core: { apiVersion, kind } });

// agent-sandbox v0.5.6 (kubernetes-sigs/agent-sandbox, CRDs in helm/crds/), version v1beta1.
const podMetadata = object({ labels: mapOf(str), annotations: mapOf(str) });
const podTemplate = object({ metadata: podMetadata, spec: core("v1", "PodSpec") }, ["spec"]);
const volumeClaimTemplates = arrayOf(object({
  metadata: object({ name: str, labels: mapOf(str), annotations: mapOf(str) }),
  spec: core("v1", "PersistentVolumeClaimSpec"),
}, ["spec"]));
const AGENT_SANDBOX = "agent-sandbox v0.5.6 CRD";
// security-profiles-operator v1.0.0 (kubernetes-sigs/security-profiles-operator, bundle/manifests/): v1 and the
// older served version have the same schema.
const SPO = "security-profiles-operator v1.0.0 CRD";
const seccompAction = oneOf("SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_TRAP",
  "SCMP_ACT_ERRNO", "SCMP_ACT_TRACE", "SCMP_ACT_ALLOW", "SCMP_ACT_LOG", "SCMP_ACT_NOTIFY");
const seccompProfileSpec = object({
  defaultAction: seccompAction,
  architectures: arrayOf(oneOf("SCMP_ARCH_NATIVE", "SCMP_ARCH_X86", "SCMP_ARCH_X86_64", "SCMP_ARCH_X32",
    "SCMP_ARCH_ARM", "SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPS", "SCMP_ARCH_MIPS64", "SCMP_ARCH_MIPS64N32",
    "SCMP_ARCH_MIPSEL", "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC", "SCMP_ARCH_PPC64",
    "SCMP_ARCH_PPC64LE", "SCMP_ARCH_S390", "SCMP_ARCH_S390X", "SCMP_ARCH_PARISC", "SCMP_ARCH_PARISC64",
    "SCMP_ARCH_RISCV64")),
  baseProfileName: str,
  flags: arrayOf(oneOf("SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
    "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV")),
  listenerMetadata: str,
  listenerPath: { type: "string", pattern: "^/var/run/security-profiles-operator/[a-zA-Z0-9_\\-\\.]+$" },
  state: oneOf("Enabled", "Disabled"),
  syscalls: arrayOf(object({
    action: seccompAction,
    names: arrayOf(str, { minItems: 1 }),
    errnoRet: int32(0),
    args: arrayOf(object({
      index: int32(0),
      op: oneOf("SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE", "SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT",
        "SCMP_CMP_MASKED_EQ"),
      value: int64(0),
      valueTwo: int64(0),
    }, ["index", "op"]), { maxItems: 6 }),
  }, ["action", "names"])),
}, ["defaultAction"]);
const appArmorProfileSpec = object({
  abstract: object({
    capability: object({ allowedCapabilities: arrayOf(str) }),
    executable: object({ allowedExecutables: arrayOf(str), allowedLibraries: arrayOf(str) }),
    filesystem: object({ readOnlyPaths: arrayOf(str), readWritePaths: arrayOf(str), writeOnlyPaths: arrayOf(str) }),
    network: object({ allowRaw: bool, allowedProtocols: object({ allowTcp: bool, allowUdp: bool }) }),
  }),
  mode: oneOf("Enforce", "Complain"),
  state: oneOf("Enabled", "Disabled"),
});

const seccompProfile = { source: SPO, specRequired: true, spec: seccompProfileSpec };
const appArmorProfile = { source: SPO, specRequired: false, spec: appArmorProfileSpec };

// "apiVersion kind" -> { source, spec, specRequired }; metadata is always checked as a core ObjectMeta.
const CUSTOM_KINDS = {
  "agents.x-k8s.io/v1beta1 Sandbox": {
    source: AGENT_SANDBOX, specRequired: true,
    spec: object({ podTemplate, volumeClaimTemplates, service: bool, operatingMode: oneOf("Running", "Suspended"),
      shutdownPolicy: oneOf("Delete", "Retain"), shutdownTime: dateTime }, ["podTemplate"]),
  },
  "extensions.agents.x-k8s.io/v1beta1 SandboxTemplate": {
    source: AGENT_SANDBOX, specRequired: true,
    spec: object({
      podTemplate, volumeClaimTemplates, service: bool,
      networkPolicy: object({ ingress: arrayOf(core("networking.k8s.io/v1", "NetworkPolicyIngressRule")),
        egress: arrayOf(core("networking.k8s.io/v1", "NetworkPolicyEgressRule")) }),
      networkPolicyManagement: oneOf("Managed", "Unmanaged"),
      envVarsInjectionPolicy: oneOf("Allowed", "Overrides", "Disallowed"),
      volumeClaimTemplatesPolicy: oneOf("Disallowed", "Allowed", "Overrides"),
    }, ["podTemplate"]),
  },
  "extensions.agents.x-k8s.io/v1beta1 SandboxWarmPool": {
    source: AGENT_SANDBOX, specRequired: true,
    spec: object({ replicas: int32(0), sandboxTemplateRef: object({ name: str }, ["name"]),
      updateStrategy: object({ type: oneOf("Recreate", "OnReplenish") }) }, ["sandboxTemplateRef"]),
  },
  "extensions.agents.x-k8s.io/v1beta1 SandboxClaim": {
    source: AGENT_SANDBOX, specRequired: true,
    spec: object({
      warmPoolRef: object({ name: str }, ["name"]),
      lifecycle: object({ shutdownPolicy: oneOf("Delete", "DeleteForeground", "Retain"), shutdownTime: dateTime,
        ttlSecondsAfterFinished: int32(0) }),
      additionalPodMetadata: podMetadata,
      env: arrayOf(object({ name: str, value: str, containerName: str }, ["name", "value"])),
      volumeClaimTemplates,
    }, ["warmPoolRef"]),
  },
  "security-profiles-operator.x-k8s.io/v1 SeccompProfile": seccompProfile,
  "security-profiles-operator.x-k8s.io/v1beta1 SeccompProfile": seccompProfile,
  "security-profiles-operator.x-k8s.io/v1 AppArmorProfile": appArmorProfile,
  "security-profiles-operator.x-k8s.io/v1alpha1 AppArmorProfile": appArmorProfile,
};

// ---------------------------------------------------------------------------------------------------------------
// The packages, loaded from NODE_MODULES by file (their versions must be the pinned ones).
let nodeModules, YAML, kubernetesVersion;
const modelModules = new Map();

async function loadPackages(dir) {
  nodeModules = path.resolve(dir);
  for (const [name, version] of Object.entries(PINNED)) {
    const manifest = path.join(nodeModules, name, "package.json");
    if (!existsSync(manifest)) {
      throw new SetupError(`${name} is not installed in ${nodeModules} (the deploy_schema_deps_install test installs it)`);
    }
    const installed = JSON.parse(readFileSync(manifest, "utf8")).version;
    if (installed !== version) {
      throw new SetupError(`${name} ${installed} is installed in ${nodeModules}, package.json pins ${version}`);
    }
  }
  kubernetesVersion = KUBERNETES_OF_MODELS[PINNED["kubernetes-models"]];
  if (!kubernetesVersion) {
    throw new SetupError(`KUBERNETES_OF_MODELS does not say which Kubernetes release kubernetes-models ` +
      `${PINNED["kubernetes-models"]} was generated from`);
  }
  const yamlModule = await import(pathToFileURL(path.join(nodeModules, "yaml", "dist", "index.js")).href);
  YAML = yamlModule.default ?? yamlModule;
}

// apiVersion "v1" -> kubernetes-models/v1, "apps/v1" -> kubernetes-models/apps/v1; null when the package has none.
async function modelModule(apiVersion) {
  if (!modelModules.has(apiVersion)) {
    let mod = null;
    if (/^([a-z0-9]([a-z0-9.-]*[a-z0-9])?\/)?v[0-9]+((alpha|beta)[0-9]+)?$/.test(apiVersion)) {
      const file = path.join(nodeModules, "kubernetes-models", ...apiVersion.split("/"), "index.js");
      if (existsSync(file)) mod = await import(pathToFileURL(file).href);
    }
    modelModules.set(apiVersion, mod);
  }
  return modelModules.get(apiVersion);
}

// The model class with a schema validator: top-level kinds carry apiVersion and kind statics.
async function modelClass(apiVersion, kind) {
  const mod = await modelModule(apiVersion);
  const cls = mod?.[kind];
  return typeof cls === "function" && Object.hasOwn(cls.prototype, "validate") ? cls : null;
}

async function objectMetaClass() {
  const file = path.join(nodeModules, "@kubernetes-models", "apimachinery", "apis", "meta", "v1", "ObjectMeta.js");
  return (await import(pathToFileURL(file).href)).ObjectMeta;
}

// ---------------------------------------------------------------------------------------------------------------
// Strict validation with a kubernetes-models validator. The precompiled validators (ajv, all errors) check the
// fields a schema defines and ignore others, so the value is seen through proxies that record which keys the
// validator looks up in each object: one whose validator looked up keys (or enumerated a map's) is described by the
// schema, and a key of it the validator never looked up is a field the schema does not have. An object the validator
// never looked into is one the schema leaves free-form (RawExtension, JSON), which the API server accepts as is.
const pointer = (key) => String(key).replace(/~/g, "~0").replace(/\//g, "~1");

function lookUps(cls, value) {
  const seen = new Map(); // original object -> { keys: Set, enumerated: bool }
  const proxies = new Map();
  const wrap = (v) => {
    if (v === null || typeof v !== "object") return v;
    if (!proxies.has(v)) {
      const record = { keys: new Set(), enumerated: false };
      seen.set(v, record);
      proxies.set(v, new Proxy(v, {
        get(target, key) {
          if (typeof key === "string") record.keys.add(key);
          return wrap(Reflect.get(target, key));
        },
        has(target, key) {
          if (typeof key === "string") record.keys.add(key);
          return Reflect.has(target, key);
        },
        ownKeys(target) {
          record.enumerated = true;
          return Reflect.ownKeys(target);
        },
      }));
    }
    return proxies.get(v);
  };
  let schemaErrors = [];
  try {
    cls.prototype.validate.call(wrap(value));
  } catch (e) {
    if (!Array.isArray(e?.errors)) throw e;
    schemaErrors = e.errors;
  }
  return { seen, schemaErrors };
}

// kubernetes-models' generator strips every key named `description` or starting with `x-kubernetes-` from the
// schemas it compiles (meant for annotations, it takes property names too), so the compiled validators lack these
// fields of these types; the package's own type declarations (*.d.ts) have them, with the types below. An object is
// known to be of one of these types when its validator looked up exactly the keys that type's validator looks up.
const DROPPED_FIELDS = [
  ["scheduling.k8s.io/v1", "PriorityClass", { description: str }],
  ["apiextensions.k8s.io/v1", "ExternalDocumentation", { description: str }],
  ["apiextensions.k8s.io/v1", "CustomResourceColumnDefinition", { description: str }],
  ["apiextensions.k8s.io/v1", "JSONSchemaProps", {
    description: str,
    "x-kubernetes-embedded-resource": bool,
    "x-kubernetes-int-or-string": bool,
    "x-kubernetes-list-map-keys": arrayOf(str),
    "x-kubernetes-list-type": str,
    "x-kubernetes-map-type": str,
    "x-kubernetes-preserve-unknown-fields": bool,
    "x-kubernetes-validations": arrayOf(core("apiextensions.k8s.io/v1", "ValidationRule")),
  }],
];
let droppedBySignature;
const signature = (keys) => [...keys].sort().join(" ");

async function droppedFieldsOf(record) {
  if (!droppedBySignature) {
    droppedBySignature = new Map();
    for (const [apiVersion, kind, fields] of DROPPED_FIELDS) {
      const cls = await modelClass(apiVersion, kind);
      if (!cls) throw new SetupError(`kubernetes-models has no ${apiVersion} ${kind}`);
      const probe = {};
      droppedBySignature.set(signature(lookUps(cls, probe).seen.get(probe).keys), fields);
    }
  }
  return record.enumerated ? undefined : droppedBySignature.get(signature(record.keys));
}

async function validateStrict(cls, value, basePath, errors) {
  const { seen, schemaErrors } = lookUps(cls, value);
  for (const err of schemaErrors) {
    const detail = err.params?.allowedValues ? `: ${err.params.allowedValues.join(", ")}` : "";
    errors.push({ path: basePath + err.instancePath, message: `${err.message ?? err.keyword}${detail}` });
  }
  const walk = async (v, at) => {
    if (v === null || typeof v !== "object") return;
    if (Array.isArray(v)) {
      for (const [i, item] of v.entries()) await walk(item, `${at}/${i}`);
      return;
    }
    const record = seen.get(v);
    if (!record || (record.keys.size === 0 && !record.enumerated)) return; // free-form, or under a type error
    for (const [key, item] of Object.entries(v)) {
      const where = `${at}/${pointer(key)}`;
      if (record.keys.has(key)) {
        await walk(item, where);
        continue;
      }
      const dropped = await droppedFieldsOf(record);
      if (dropped && Object.hasOwn(dropped, key)) await checkShape(dropped[key], item, where, errors);
      else errors.push({ path: where, message: `unknown field "${key}"` });
    }
  };
  await walk(value, basePath);
}

// Custom-resource fields by the shapes above; `core` values go to validateStrict. null stands for "not set", as
// the core schemas take it.
const INT_LIMITS = { 32: [-(2 ** 31), 2 ** 31 - 1], 64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] };
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

async function checkShape(shape, value, at, errors) {
  if (value === null) return;
  const fail = (message) => errors.push({ path: at, message });
  if (shape.core) {
    const cls = await modelClass(shape.core.apiVersion, shape.core.kind);
    if (!cls) throw new SetupError(`kubernetes-models has no ${shape.core.apiVersion} ${shape.core.kind}`);
    return await validateStrict(cls, value, at, errors);
  }
  switch (shape.type) {
    case "string":
      if (typeof value !== "string") return fail("must be string");
      if (shape.enum && !shape.enum.includes(value)) {
        fail(`must be equal to one of the allowed values: ${shape.enum.join(", ")}`);
      }
      if (shape.pattern && !new RegExp(shape.pattern).test(value)) fail(`must match pattern "${shape.pattern}"`);
      if (shape.format === "date-time" && !RFC3339.test(value)) fail("must be an RFC 3339 date-time");
      return;
    case "boolean":
      if (typeof value !== "boolean") fail("must be boolean");
      return;
    case "integer": {
      if (!Number.isInteger(value)) return fail("must be integer");
      const [low, high] = INT_LIMITS[shape.bits];
      if (value < low || value > high) fail(`must be an int${shape.bits}`);
      if (shape.minimum !== undefined && value < shape.minimum) fail(`must be >= ${shape.minimum}`);
      return;
    }
    case "array":
      if (!Array.isArray(value)) return fail("must be array");
      if (shape.minItems !== undefined && value.length < shape.minItems) fail(`must have at least ${shape.minItems} items`);
      if (shape.maxItems !== undefined && value.length > shape.maxItems) fail(`must have at most ${shape.maxItems} items`);
      for (const [i, item] of value.entries()) await checkShape(shape.items, item, `${at}/${i}`, errors);
      return;
    case "object":
      if (typeof value !== "object" || Array.isArray(value)) return fail("must be object");
      if (shape.additionalProperties) {
        for (const [key, item] of Object.entries(value)) {
          await checkShape(shape.additionalProperties, item, `${at}/${pointer(key)}`, errors);
        }
        return;
      }
      for (const key of shape.required) {
        if (value[key] === undefined || value[key] === null) fail(`must have required property ${key}`);
      }
      for (const [key, item] of Object.entries(value)) {
        const where = `${at}/${pointer(key)}`;
        if (!Object.hasOwn(shape.properties, key)) errors.push({ path: where, message: `unknown field "${key}"` });
        else await checkShape(shape.properties[key], item, where, errors);
      }
      return;
    default:
      throw new SetupError(`bad shape ${JSON.stringify(shape)}`);
  }
}

const coreTypesIn = (shape, found = new Set()) => {
  if (shape.core) found.add(shape.core.kind);
  for (const child of [shape.items, shape.additionalProperties, ...Object.values(shape.properties ?? {})]) {
    if (child) coreTypesIn(child, found);
  }
  return found;
};

// ---------------------------------------------------------------------------------------------------------------
// One document: returns { label, against, errors }.
async function validateDocument(doc) {
  const errors = [];
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    return { label: "?", against: "nothing", errors: [{ path: "", message: "a manifest document must be a mapping" }] };
  }
  const { apiVersion, kind, metadata } = doc;
  const label = `${kind ?? "?"}/${metadata?.name ?? metadata?.generateName ?? "?"}`;
  if (typeof apiVersion !== "string" || typeof kind !== "string") {
    return { label, against: "nothing", errors: [{ path: "", message: "apiVersion and kind must be strings" }] };
  }
  if (typeof metadata?.name !== "string" && typeof metadata?.generateName !== "string") {
    errors.push({ path: "/metadata/name", message: "must have required property name (or generateName)" });
  }
  const custom = CUSTOM_KINDS[`${apiVersion} ${kind}`];
  if (custom) {
    const embedded = [...coreTypesIn(custom.spec)].join(", ");
    const against = `${custom.source} ${apiVersion} ${kind} fields as listed in validate_manifests.mjs` +
      ` + core ObjectMeta${embedded ? `, ${embedded}` : ""} (Kubernetes ${kubernetesVersion}, strict)`;
    for (const key of Object.keys(doc)) {
      if (!["apiVersion", "kind", "metadata", "spec"].includes(key)) {
        errors.push({ path: `/${pointer(key)}`, message: `unknown field "${key}"` });
      }
    }
    if (metadata !== undefined) await validateStrict(await objectMetaClass(), metadata, "/metadata", errors);
    if (doc.spec === undefined || doc.spec === null) {
      if (custom.specRequired) errors.push({ path: "", message: "must have required property spec" });
    } else {
      await checkShape(custom.spec, doc.spec, "/spec", errors);
    }
    return { label, against, errors };
  }
  const cls = await modelClass(apiVersion, kind);
  if (!cls || cls.kind !== kind || cls.apiVersion !== apiVersion) {
    const message = `unknown kind: ${apiVersion} ${kind} is neither a Kubernetes ${kubernetesVersion} kind ` +
      "nor a custom resource listed in CUSTOM_KINDS";
    return { label, against: "nothing", errors: [{ path: "/kind", message }] };
  }
  const against =
    `kubernetes-models ${PINNED["kubernetes-models"]} (Kubernetes ${kubernetesVersion}) ${apiVersion} ${kind}, strict`;
  // kubernetes-models also keeps group-versions removed before 1.36 (extensions/v1beta1...): only GA ones are
  // certain to be served by the release named.
  if (!/^v[0-9]+$/.test(apiVersion.split("/").pop())) {
    errors.push({ path: "/apiVersion", message: `${apiVersion} is not a GA API version: the schema package also ` +
      `carries group-versions that Kubernetes ${kubernetesVersion} no longer serves, so it cannot vouch for it` });
  }
  await validateStrict(cls, doc, "", errors);
  return { label, against, errors };
}

// YAML as kubectl reads it (YAML 1.1: yes/on are booleans, 0644 is octal), timestamps and 1:30 left as strings,
// duplicate keys an error.
function parseYaml(text) {
  return YAML.parseAllDocuments(text, {
    version: "1.1",
    uniqueKeys: true,
    customTags: (tags) => tags.filter((tag) => tag.tag !== "tag:yaml.org,2002:timestamp" && tag.format !== "TIME"),
  });
}

function yamlFiles(target) {
  if (statSync(target).isFile()) return [target];
  const found = [];
  for (const entry of readdirSync(target, { withFileTypes: true })) {
    const full = path.join(target, entry.name);
    if (entry.isDirectory()) found.push(...yamlFiles(full));
    else if (/\.ya?ml$/.test(entry.name)) found.push(full);
  }
  return found.sort();
}

async function validateTree(target) {
  const root = statSync(target).isFile() ? path.dirname(target) : target;
  const files = yamlFiles(target);
  if (files.length === 0) throw new SetupError(`no *.yaml under ${target}`);
  let valid = 0, invalid = 0;
  for (const file of files) {
    const name = path.relative(root, file);
    const docs = parseYaml(readFileSync(file, "utf8"));
    for (const [i, doc] of docs.entries()) {
      const where = `${name} #${i + 1}`;
      let result;
      if (doc.errors.length) {
        const errors = doc.errors.map((e) => ({ path: "", message: e.message.split("\n")[0] }));
        result = { label: "?", against: "YAML 1.1", errors };
      } else {
        const value = doc.toJS();
        if (value === null || value === undefined) {
          console.log(`EMPTY ${where}: no object in this document (kubectl ignores it)`);
          continue;
        }
        result = await validateDocument(value);
      }
      const ok = result.errors.length === 0;
      ok ? valid++ : invalid++;
      console.log(`${ok ? "PASS" : "FAIL"}  ${where} ${result.label}: against ${result.against}`);
      for (const e of result.errors) console.log(`        ${e.path || "/"}: ${e.message}`);
    }
  }
  console.log(`deploy manifests: ${valid} valid, ${invalid} invalid document(s) in ${files.length} file(s) ` +
    `(kubernetes-models ${PINNED["kubernetes-models"]}, Kubernetes ${kubernetesVersion}, offline)`);
  return invalid === 0 ? 0 : 1;
}

// Each negative case alone, in a child process: it must exit 1 and print every `# expect-error:` text on an error
// line (the indented lines under FAIL).
function expectFailures(dir, modules) {
  const files = yamlFiles(dir);
  if (files.length === 0) throw new SetupError(`no *.yaml under ${dir}`);
  let bad = 0;
  for (const file of files) {
    const name = path.relative(dir, file);
    const expected = [...readFileSync(file, "utf8").matchAll(/^# expect-error: (.+)$/gm)].map((m) => m[1].trim());
    const run = spawnSync(process.execPath, [SELF, file, modules], { encoding: "utf8" });
    const errorLines = run.stdout.split("\n").filter((line) => line.startsWith("        "));
    const missing = expected.filter((text) => !errorLines.some((line) => line.includes(text)));
    const problems = [];
    if (expected.length === 0) problems.push("names no `# expect-error:` line");
    if (run.status !== 1) problems.push(`exit status ${run.status} (expected 1: invalid)`);
    for (const text of missing) problems.push(`no error line contains "${text}"`);
    if (problems.length) {
      bad++;
      console.log(`FAIL  ${name}: ${problems.join("; ")}\n${run.stdout}${run.stderr}`);
    } else {
      console.log(`PASS  ${name}: rejected (exit 1) with ${expected.map((t) => `"${t}"`).join(", ")}`);
      for (const line of errorLines) console.log(line);
    }
  }
  console.log(`negative cases: ${files.length - bad} rejected as expected, ${bad} not`);
  return bad === 0 ? 0 : 1;
}

async function main(argv) {
  const expectFail = argv[0] === "--expect-fail";
  const [target, modules] = expectFail ? argv.slice(1) : argv;
  if (!target || !modules || !existsSync(target)) {
    throw new SetupError("usage: node validate_manifests.mjs [--expect-fail] DIR_OR_FILE NODE_MODULES");
  }
  await loadPackages(modules);
  return expectFail ? expectFailures(target, modules) : validateTree(target);
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  console.error(e instanceof SetupError ? `validate_manifests: ${e.message}` : e);
  process.exitCode = 2;
}
