/**
 * Validates a JSON body against a response schema of the copied Mintlify specs, so the fakes
 * are checked against what Mintlify publishes, field for field (no field the spec does not list). OpenAPI 3.0's `nullable: true` becomes a JSON
 * Schema type union, and `#/components/schemas/...` references resolve into the same spec.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

export type SpecName = 'admin' | 'analytics' | 'deploy';

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { responses?: Record<string, ResponseObject> }>>;
  components: { schemas?: Record<string, unknown> };
}
interface ResponseObject {
  content?: Record<string, { schema?: unknown }>;
}

const SPEC_FILES: Record<SpecName, string> = {
  admin: 'admin-openapi.json',
  analytics: 'analytics.openapi.json',
  deploy: 'deploy-openapi.json',
};

function loadSpec(name: SpecName): OpenApiDocument {
  return JSON.parse(
    readFileSync(new URL(`./${SPEC_FILES[name]}`, import.meta.url), 'utf8'),
  ) as OpenApiDocument;
}

/** Rewrites one schema (deeply) into plain JSON Schema that ajv understands. */
function toJsonSchema(node: unknown, spec: SpecName, isOpenApi30: boolean): unknown {
  if (Array.isArray(node)) return node.map((item) => toJsonSchema(item, spec, isOpenApi30));
  if (typeof node !== 'object' || node === null) return node;
  const { nullable, ...rest } = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) {
    if (key === '$ref' && typeof value === 'string') {
      out.$ref = value.replace('#/components/schemas/', `${spec}.json#/definitions/`);
    } else {
      out[key] = toJsonSchema(value, spec, isOpenApi30);
    }
  }
  // The fake answers only what the spec lists: an object has no fields beyond its properties (the specs
  // leave additionalProperties out, which JSON Schema would read as "anything more is fine").
  if (out.properties !== undefined && out.additionalProperties === undefined)
    out.additionalProperties = false;
  if (!isOpenApi30 || nullable !== true) return out;
  // OpenAPI 3.0: `nullable: true` adds null to the allowed values.
  if (typeof out.type === 'string') out.type = [out.type, 'null'];
  if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
  if (out.type === undefined) return { anyOf: [out, { type: 'null' }] };
  return out;
}

const ajv = new Ajv({ allErrors: true });
// ajv-formats is CommonJS: under NodeNext its default import is the module, whose `default` is the plugin.
addFormatsModule.default(ajv);
ajv.addKeyword({ keyword: 'example' });

const specs = new Map<SpecName, OpenApiDocument>();
function spec(name: SpecName): OpenApiDocument {
  let document = specs.get(name);
  if (!document) {
    document = loadSpec(name);
    const isOpenApi30 = document.openapi.startsWith('3.0');
    ajv.addSchema({
      $id: `${name}.json`,
      definitions: toJsonSchema(document.components.schemas ?? {}, name, isOpenApi30),
    });
    specs.set(name, document);
  }
  return document;
}

const validators = new Map<string, ValidateFunction>();

function compile(key: string, name: SpecName, schema: unknown): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) {
    const document = spec(name);
    validate = ajv.compile(toJsonSchema(schema, name, document.openapi.startsWith('3.0')) as object);
    validators.set(key, validate);
  }
  return validate;
}

export interface ValidationResult {
  valid: boolean;
  /** `instancePath message` per problem, empty when valid. */
  errors: string[];
}

function run(validate: ValidateFunction, body: unknown): ValidationResult {
  const valid = validate(body);
  const errors = (validate.errors ?? []).map((error) => {
    // Name what is wrong, not only where: "must NOT have additional properties (title)".
    const { additionalProperty, allowedValues } = error.params as {
      additionalProperty?: string;
      allowedValues?: unknown[];
    };
    const detail =
      additionalProperty === undefined
        ? allowedValues === undefined
          ? ''
          : ` (${JSON.stringify(allowedValues)})`
        : ` (${additionalProperty})`;
    return `${error.instancePath || '(body)'} ${error.message ?? ''}${detail}`;
  });
  return { valid, errors: valid ? [] : errors };
}

/** Whether the spec declares a JSON answer `status` for `method path` (an operation it does not have throws). */
export function declaresResponse(name: SpecName, method: string, path: string, status: number): boolean {
  const operation = spec(name).paths[path]?.[method.toLowerCase()];
  if (!operation) throw new Error(`${name} spec has no operation ${method} ${path}`);
  return operation.responses?.[String(status)]?.content?.['application/json']?.schema !== undefined;
}

/** The `application/json` schema the spec declares for `method path` answering `status`; throws if undeclared. */
export function responseSchema(name: SpecName, method: string, path: string, status: number): unknown {
  const operation = spec(name).paths[path]?.[method.toLowerCase()];
  if (!operation) throw new Error(`${name} spec has no operation ${method} ${path}`);
  const schema = operation.responses?.[String(status)]?.content?.['application/json']?.schema;
  if (schema === undefined)
    throw new Error(`${name} spec declares no JSON answer ${status} for ${method} ${path}`);
  return schema;
}

export function validateResponse(
  name: SpecName,
  method: string,
  path: string,
  status: number,
  body: unknown,
): ValidationResult {
  const schema = responseSchema(name, method, path, status);
  return run(compile(`${name} ${method} ${path} ${status}`, name, schema), body);
}

/** Validates against a named component, e.g. the error body for a status the spec does not declare. */
export function validateComponent(name: SpecName, component: string, body: unknown): ValidationResult {
  if (spec(name).components.schemas?.[component] === undefined) {
    throw new Error(`${name} spec has no component ${component}`);
  }
  return run(compile(`${name} #${component}`, name, { $ref: `#/components/schemas/${component}` }), body);
}
