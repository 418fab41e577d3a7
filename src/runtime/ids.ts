// Murmur's ids: `<prefix>` + uuid v7 as 32 lowercase hex ("simple" form). The first 12 hex digits
// are the mint time in ms. Guarantees: pure; `idTimestampMs` never throws (undefined when the
// name is not a well-formed id); minted ids sort by mint time within this process (uuid v7 is
// monotonic in the `uuid` package).
import { v7 as uuidv7 } from 'uuid';

export type IdPrefix = 'ses_' | 'msg_' | 'evt_' | 'tsk_' | 'wrk_' | 'ctx_';

export function mintId(prefix: IdPrefix): string {
  return prefix + uuidv7().replaceAll('-', '');
}

/**
 * The mint time of a prefixed uuid-v7 id in ms, read from the first 12 hex digits after the
 * prefix — the runtime's own rule (`session_id_timestamp_ms`): only those 12 chars must be hex.
 */
export function idTimestampMs(name: string, prefix: IdPrefix): number | undefined {
  if (!name.startsWith(prefix)) return undefined;
  // read digit by digit (12 hex digits are 48 bits: exact as a double); a scan judges every name
  // of every root by this
  let ms = 0;
  for (let i = prefix.length; i < prefix.length + 12; i++) {
    const c = name.charCodeAt(i); // NaN past the end: no digit
    const d =
      c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
    if (d < 0) return undefined;
    ms = ms * 16 + d;
  }
  return ms;
}

/** True when `name` is a session directory name the runtime would rank (`ses_` + 12 hex at least). */
export function isSessionName(name: string): boolean {
  return idTimestampMs(name, 'ses_') !== undefined;
}

/**
 * For a name that starts with `ses_` but is no session id (`isSessionName`), the words saying so
 * and what the name is taken for instead (a context id: a context may be named anything); else
 * undefined. Commands that take "a ses_ id or a context id" say it before "not found".
 */
export function notASessionId(name: string): string | undefined {
  if (!name.startsWith('ses_') || isSessionName(name)) return undefined;
  return `'${name}' is not a session id (ses_ followed by at least 12 hex digits), so it is taken for a context id`;
}
