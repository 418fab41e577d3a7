// Names of murmur-gc's own entries under the murmur home. Pure constants.
export const GC_DIR_NAME = 'gc';
export const STATE_FILE = 'state.json';
export const TRACE_APPENDS_FILE = 'trace-appends.json';
