// An unprivileged user for tests whose property root cannot observe (root ignores permissions).
// Created with useradd under a random name and removed afterwards; requires root and useradd.
import { execFileSync, spawnSync } from 'node:child_process';
import { hex } from '../helpers/fixtures.js';

export interface TestUser {
  name: string;
  uid: number;
  gid: number;
  remove(): void;
}

export function createUser(): TestUser {
  if (process.getuid?.() !== 0) throw new Error('this test creates a user and must run as root (CI runs as root)');
  const name = `mgc${hex(6)}`;
  execFileSync('useradd', ['-M', '-d', '/nonexistent', '-s', '/usr/sbin/nologin', name]);
  const uid = Number(execFileSync('id', ['-u', name]).toString().trim());
  const gid = Number(execFileSync('id', ['-g', name]).toString().trim());
  return { name, uid, gid, remove: () => void spawnSync('userdel', ['-f', name]) };
}

export function chownR(p: string, u: TestUser): void {
  execFileSync('chown', ['-R', `${u.uid}:${u.gid}`, p]);
}

/** setpriv argv prefix running a command as `u`. */
export function asUser(u: TestUser): string[] {
  return ['setpriv', '--reuid', String(u.uid), '--regid', String(u.gid), '--clear-groups'];
}
