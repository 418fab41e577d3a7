// YAML scalars resolved as the runtime's reader resolves them (serde_yaml 0.9, `de.rs`
// `visit_untagged_str`), not as the `yaml` package's YAML 1.2 core schema does. Pure.
//
// The `yaml` package parses the syntax (it and libyaml agree on structure); this module turns its
// node tree into plain data with serde_yaml's scalar rules. Untagged PLAIN scalars only (a quoted
// or block scalar is always a string):
// - `""`, `~`, `null` → null (not `Null`/`NULL`); `true`/`false` → boolean (not `True`/`TRUE`).
// - Integers (→ bigint): an optional single leading `+`, then `0x`+hex, `0o`+octal, `0b`+binary
//   (lowercase prefixes; Rust's `from_str_radix` also takes one sign after the prefix: `0x+1f`),
//   or decimal digits; `-` with the same forms. A leading zero followed only by digits (`010`,
//   `+007`, `-00`) is a string (YAML 1.2). No `_` separators; `0X10` is a string.
// - Floats (→ YamlFloat): `.inf`/`.Inf`/`.INF` (optionally `+`/`-`), `.nan`/`.NaN`/`.NAN`, and
//   whatever Rust's `f64::from_str` reads that is finite (`1e3`, `1.`, `.5`, `+1.5`).
// - Everything else is a string.
// Tags: `!!str`, `!!int`, `!!float`, `!!bool`, `!!null` are honoured as serde_yaml does (a value
// the tag does not fit is an error); any other tag (`!custom …`) gives a `YamlTagged`, which no
// retain block or config key accepts (serde_yaml's `Value::Tagged`).
//
// Syntax where the two differ (`libyamlQuotedContinuations`, applied to the text before the `yaml`
// package parses it): libyaml's quoted-scalar scanner never looks at the indentation of a
// continuation line — only a document marker (`---`/`...`) at column 0 or the end of the input
// stops it — while the `yaml` package refuses a continuation line indented no deeper than the
// block node holding the scalar. Such lines are indented to the scalar's opening quote first; a
// continuation line's leading blanks are folded away by both readers, so the value is unchanged
// and only what libyaml accepts is accepted. At most MAX_QUOTED_REPAIRS scalars of one document
// are repaired (each costs a parse); past that the rest are refused, as the `yaml` package does
// (docs/config.md).
import { Parser, isAlias, isMap, isScalar, isSeq, type Document, type Node, type Scalar } from 'yaml';
import { YamlFloat, YamlTagged } from './retain.js';

export { YamlTagged };

export class YamlValueError extends Error {}

const I64_MIN = -(2n ** 63n);
const U64_MAX = 2n ** 64n - 1n;
const I128_MIN = -(2n ** 127n);
const U128_MAX = 2n ** 128n - 1n;

/** Rust `from_str_radix` for unsigned/signed types: one optional sign, then digits of the radix. */
function fromStrRadix(s: string, radix: 2 | 8 | 10 | 16, signed: boolean): bigint | undefined {
  let body = s;
  let neg = false;
  if (body.startsWith('+')) body = body.slice(1);
  else if (body.startsWith('-')) {
    if (!signed) return undefined;
    neg = true;
    body = body.slice(1);
  }
  const digits = radix === 16 ? /^[0-9a-fA-F]+$/ : radix === 10 ? /^[0-9]+$/ : radix === 8 ? /^[0-7]+$/ : /^[01]+$/;
  if (!digits.test(body)) return undefined;
  const prefix = radix === 16 ? '0x' : radix === 8 ? '0o' : radix === 2 ? '0b' : '';
  const v = BigInt(prefix + body);
  return neg ? -v : v;
}

function digitsButNotNumber(scalar: string): boolean {
  const s = scalar.startsWith('-') || scalar.startsWith('+') ? scalar.slice(1) : scalar;
  return s.length > 1 && s.startsWith('0') && /^[0-9]+$/.test(s.slice(1));
}

function parseUnsigned(scalar: string, max: bigint): bigint | undefined {
  const unpositive = scalar.startsWith('+') ? scalar.slice(1) : scalar;
  for (const [prefix, radix] of [
    ['0x', 16],
    ['0o', 8],
    ['0b', 2],
  ] as const) {
    if (unpositive.startsWith(prefix)) {
      const v = fromStrRadix(unpositive.slice(2), radix, false);
      if (v !== undefined && v <= max) return v;
    }
  }
  if (digitsButNotNumber(scalar)) return undefined;
  const v = fromStrRadix(unpositive, 10, false);
  return v !== undefined && v <= max ? v : undefined;
}

function parseNegative(scalar: string, min: bigint): bigint | undefined {
  for (const [prefix, radix] of [
    ['-0x', 16],
    ['-0o', 8],
    ['-0b', 2],
  ] as const) {
    if (scalar.startsWith(prefix)) {
      const v = fromStrRadix('-' + scalar.slice(3), radix, true);
      if (v !== undefined && v >= min && v <= -min - 1n) return v;
    }
  }
  if (digitsButNotNumber(scalar)) return undefined;
  const v = fromStrRadix(scalar, 10, true);
  return v !== undefined && v >= min && v <= -min - 1n ? v : undefined;
}

/** Rust's `f64::from_str` grammar (decimal, optional exponent, `inf`/`infinity`/`nan`). */
function rustParseF64(s: string): number | undefined {
  if (/^[+-]?(?:inf|infinity|nan)$/i.test(s))
    return s.toLowerCase().includes('nan') ? Number.NaN : s.startsWith('-') ? -Infinity : Infinity;
  if (!/^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(s)) return undefined;
  return Number(s);
}

/** serde_yaml 0.9 `visit_untagged_str` for a plain scalar. */
export function resolvePlainScalar(v: string): unknown {
  if (v === '' || v === '~' || v === 'null') return null;
  if (v === 'true') return true;
  if (v === 'false') return false;
  const u =
    parseUnsigned(v, U64_MAX) ?? parseNegative(v, I64_MIN) ?? parseUnsigned(v, U128_MAX) ?? parseNegative(v, I128_MIN);
  if (u !== undefined) return u;
  if (digitsButNotNumber(v)) return v;
  const unsigned = v.startsWith('+') ? v.slice(1) : v;
  if (unsigned === '.inf' || unsigned === '.Inf' || unsigned === '.INF') return new YamlFloat(Infinity);
  if (v === '-.inf' || v === '-.Inf' || v === '-.INF') return new YamlFloat(-Infinity);
  if (v === '.nan' || v === '.NaN' || v === '.NAN') return new YamlFloat(Number.NaN);
  const f = rustParseF64(v);
  if (f !== undefined && Number.isFinite(f)) return new YamlFloat(f);
  return v;
}

const CORE = 'tag:yaml.org,2002:';

function scalarValue(node: Scalar): unknown {
  const text = typeof node.source === 'string' ? node.source : String(node.source);
  const tag = node.tag;
  if (tag !== undefined && tag !== '!') {
    switch (tag) {
      case `${CORE}str`:
        return text;
      case `${CORE}int`: {
        const v = /^[+-]?[0-9]+$/.test(text) ? BigInt(text) : undefined;
        if (v === undefined || v < I64_MIN || v > -I64_MIN - 1n)
          throw new YamlValueError(`invalid value: string ${JSON.stringify(text)}, expected an integer`);
        return v;
      }
      case `${CORE}float`: {
        const f = rustParseF64(text);
        if (f === undefined)
          throw new YamlValueError(`invalid value: string ${JSON.stringify(text)}, expected a float`);
        return new YamlFloat(f);
      }
      case `${CORE}bool`:
        if (text === 'true' || text === 'false') return text === 'true';
        throw new YamlValueError(`invalid value: string ${JSON.stringify(text)}, expected a boolean`);
      case `${CORE}null`:
        if (text === '~' || text === 'null') return null;
        throw new YamlValueError(`invalid value: string ${JSON.stringify(text)}, expected null`);
      default:
        return new YamlTagged(tag.replace(/^!/, ''), node.type === 'PLAIN' ? resolvePlainScalar(text) : text);
    }
  }
  return node.type === 'PLAIN' && tag === undefined ? resolvePlainScalar(text) : text;
}

/**
 * The document's value with serde_yaml's scalar rules. Mapping keys become strings (the key's
 * text); `aliases` bounds alias expansion (a billion-laughs document is refused).
 * @throws YamlValueError
 */
export function documentToData(doc: Document, maxAliases = 100): unknown {
  let aliases = 0;
  const convert = (node: unknown, depth: number): unknown => {
    if (depth > 512) throw new YamlValueError('nesting too deep');
    if (node === null || node === undefined) return null;
    if (isAlias(node)) {
      if (++aliases > maxAliases) throw new YamlValueError(`more than ${maxAliases} aliases`);
      return convert(node.resolve(doc), depth + 1);
    }
    const tag = (node as { tag?: string }).tag;
    const custom = tag !== undefined && !tag.startsWith(CORE) && tag !== '!';
    if (isScalar(node)) return scalarValue(node);
    if (isSeq(node)) {
      const out = node.items.map((x) => convert(x, depth + 1));
      return custom ? new YamlTagged(tag.replace(/^!/, ''), out) : out;
    }
    if (isMap(node)) {
      const out: Record<string, unknown> = {};
      for (const pair of node.items) {
        const k = pair.key as Node | null;
        const key = isScalar(k) ? String(k.source) : k === null ? '' : String(convert(k, depth + 1));
        // defineProperty: a `__proto__` key stays an ordinary (unknown, refused) key.
        Object.defineProperty(out, key, {
          value: convert(pair.value, depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return custom ? new YamlTagged(tag.replace(/^!/, ''), out) : out;
    }
    return null;
  };
  return convert(doc.contents, 0);
}

// ── quoted scalars continued at any indentation (libyaml's `yaml_parser_scan_flow_scalar`) ──────

export const MAX_QUOTED_REPAIRS = 64;

const isBreak = (c: string | undefined): boolean => c === '\n' || c === '\r';
const isBlank = (c: string | undefined): boolean => c === ' ' || c === '\t';

/** A `---` or `...` document marker at `i` (a line start), followed by a blank, a break or the end. */
function documentMarkerAt(text: string, i: number): boolean {
  const three = text.slice(i, i + 3);
  if (three !== '---' && three !== '...') return false;
  const next = text[i + 3];
  return next === undefined || isBlank(next) || isBreak(next);
}

/**
 * Where libyaml's scanner ends the quoted scalar opening at `open` (the index after its closing
 * quote), or undefined when libyaml refuses it (a document marker at column 0, the end of input).
 */
export function libyamlQuotedEnd(text: string, open: number): number | undefined {
  const q = text[open];
  const single = q === "'";
  let i = open + 1;
  for (;;) {
    if ((i === 0 || isBreak(text[i - 1])) && documentMarkerAt(text, i)) return undefined;
    if (i >= text.length) return undefined;
    while (i < text.length && !isBlank(text[i]) && !isBreak(text[i])) {
      const c = text[i];
      if (single && c === "'" && text[i + 1] === "'") i += 2;
      else if (c === q) return i + 1;
      else if (!single && c === '\\' && isBreak(text[i + 1])) {
        i += 1;
        break; // an escaped line break: the break is consumed with the blanks below
      } else if (!single && c === '\\') i += 2;
      else i += 1;
    }
    while (i < text.length && (isBlank(text[i]) || isBreak(text[i]))) i++;
  }
}

/** Quoted-scalar tokens of the `yaml` package's syntax tree, in document order. */
function quotedTokens(text: string): { offset: number; end: number }[] {
  const out: { offset: number; end: number }[] = [];
  const walk = (node: unknown, depth: number): void => {
    if (depth > 1024 || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      for (const x of node) walk(x, depth + 1);
      return;
    }
    const t = node as { type?: unknown; offset?: unknown; source?: unknown };
    if (
      (t.type === 'double-quoted-scalar' || t.type === 'single-quoted-scalar') &&
      typeof t.offset === 'number' &&
      typeof t.source === 'string'
    ) {
      out.push({ offset: t.offset, end: t.offset + t.source.length });
    }
    for (const v of Object.values(node)) if (typeof v === 'object') walk(v, depth + 1);
  };
  for (const token of new Parser().parse(text)) walk(token, 0);
  return out.sort((a, b) => a.offset - b.offset);
}

/**
 * `text` with every continuation line of a quoted scalar that libyaml accepts but the `yaml`
 * package cuts short (a line indented no deeper than its block node) indented to the scalar's
 * opening quote. Line numbers are unchanged.
 */
export function libyamlQuotedContinuations(text: string): string {
  let out = text;
  for (let n = 0; n < MAX_QUOTED_REPAIRS; n++) {
    let repaired: string | undefined;
    for (const tok of quotedTokens(out)) {
      const end = libyamlQuotedEnd(out, tok.offset);
      if (end === undefined || tok.end >= end) continue; // refused by libyaml too, or read whole
      const lineStart = Math.max(out.lastIndexOf('\n', tok.offset - 1), out.lastIndexOf('\r', tok.offset - 1)) + 1;
      const need = tok.offset - lineStart;
      let next = out.slice(0, tok.offset + 1);
      for (let i = tok.offset + 1; i < end; i++) {
        const c = out[i] as string;
        next += c;
        if (!isBreak(c) || (c === '\r' && out[i + 1] === '\n')) continue;
        let spaces = 0;
        while (out[i + 1 + spaces] === ' ') spaces++;
        if (spaces < need) next += ' '.repeat(need - spaces);
      }
      repaired = next + out.slice(end);
      break;
    }
    if (repaired === undefined || repaired === out) return out;
    out = repaired;
  }
  return out;
}
