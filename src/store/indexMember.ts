/**
 * A member of an ordered index written as JSON (`JSON.stringify` of a flat record), read back:
 * undefined when it does not parse, or when one of `fields` is missing or of another type (written
 * by another version, or by hand).
 */
export function readIndexMember<T extends { [K in keyof T]: string | number }>(
  member: string,
  fields: { [K in keyof T]: T[K] extends number ? 'number' : 'string' },
): T | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(member);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const record = parsed as Record<string, unknown>;
  return Object.entries(fields).every(([field, type]) => typeof record[field] === type)
    ? (record as T)
    : undefined;
}
