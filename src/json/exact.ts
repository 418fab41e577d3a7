// JSON.stringify that writes bigints as JSON numbers, digit for digit (exact u64 values such as
// header integers and `detached_at_ms`, above 2^53 too). Pure. Output is otherwise exactly
// JSON.stringify's (compact, same escaping, same key order).

const BIG_MARK = '\u0000u64:';
// JSON.stringify writes the marker's NUL as `\u0000`; a string holding a real backslash followed
// by `u0000` is written `\\u0000` and never matches.
const BIG_TOKEN = /"\\u0000u64:(-?[0-9]+)"/g;

export function stringifyExact(value: unknown): string {
  const text = JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? BIG_MARK + v.toString() : v));
  return text.replace(BIG_TOKEN, '$1');
}
