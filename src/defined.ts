// An object without its undefined-valued keys (exactOptionalPropertyTypes is on, so an optional
// key may be absent but not hold undefined). Guarantees: the keys left keep their order and
// values; a key whose type admits undefined comes back optional without undefined, every other
// key stays required; the input is not changed.

type RequiredKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? never : K }[keyof T];
type MaybeKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T];

/** `T` with every key that may be undefined made optional instead. */
export type DefinedOnly<T> = { [K in RequiredKeys<T>]: T[K] } & { [K in MaybeKeys<T>]?: Exclude<T[K], undefined> };

/** `{ a, b }` without the keys whose value is undefined: `...definedOnly({ a, b })` replaces `...(a !== undefined ? { a } : {})`. */
export function definedOnly<T extends object>(o: T): DefinedOnly<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as DefinedOnly<T>;
}
