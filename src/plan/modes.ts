// Which paths need their mode reasserted, pure (docs/design.md §1 "Modes", §R7).
// Guarantees: the home keeps its owner bits and loses group/other bits (the runtime's
// `ensure_murmur_home`); every other private directory becomes exactly 0700 and every private file
// exactly 0600; a symlink is never chmod'ed, nor a path owned by another user, nor a file with
// more than one hard link (chmod would change the other name too). Nothing is widened except an
// owner-only private directory the runtime itself would reopen to 0700.
import type { ModeInput, ModeRole } from '../runtime/inventory.js';

export interface ChmodAction {
  path: string;
  from: number;
  to: number;
}

export interface ModeSkip {
  path: string;
  code: 'symlink' | 'foreign_owner' | 'hard_link' | 'not_regular';
  detail: string;
}

export function targetMode(role: ModeRole, mode: number): number {
  switch (role) {
    case 'home':
      return mode & 0o700;
    case 'private_dir':
      return 0o700;
    case 'private_file':
      return 0o600;
  }
}

export function planMode(input: ModeInput, uid: number): ChmodAction | ModeSkip | undefined {
  const want = targetMode(input.role, input.mode);
  if (input.kind === 'symlink') {
    return {
      path: input.path,
      code: 'symlink',
      detail: `${input.path} is a symbolic link; its mode is not reasserted through it`,
    };
  }
  const expectDir = input.role !== 'private_file';
  if ((expectDir && input.kind !== 'dir') || (!expectDir && input.kind !== 'file')) {
    return {
      path: input.path,
      code: 'not_regular',
      detail: `${input.path} is not a ${expectDir ? 'directory' : 'regular file'}; left alone`,
    };
  }
  if ((input.mode & 0o7777) === want) return undefined;
  if (input.uid !== uid) {
    return {
      path: input.path,
      code: 'foreign_owner',
      detail: `${input.path} belongs to uid ${input.uid}, not ${uid}; its mode is left alone`,
    };
  }
  if (input.kind === 'file' && input.nlink > 1) {
    return {
      path: input.path,
      code: 'hard_link',
      detail: `${input.path} has ${input.nlink} hard links; its mode is left alone`,
    };
  }
  return { path: input.path, from: input.mode & 0o7777, to: want };
}
