// Debris where the sweep lock belongs (`<home>/gc/sweep.lock` a regular file, a FIFO, a link, a
// directory holding a foreign file) no longer blocks every sweep: it is removed (a FIFO is never
// opened, a link never followed), said with `lock_debris`, and the sweep proceeds; a dry run says
// what it would remove and removes nothing; a live holder's lock still makes the loser exit 75.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as f from '../helpers/fixtures.js';
import { requirement } from '../helpers/requirements.js';

interface Report {
  skipped: { target: string; code: string; detail: string }[];
  errors: { target: string; code: string; detail: string }[];
}

let T: string;
let home: string;
let gc: string;
let lock: string;
beforeEach(() => {
  T = f.tempDir('lock-debris');
  home = path.join(T, '.murmur');
  gc = path.join(home, 'gc');
  lock = path.join(gc, 'sweep.lock');
  fs.mkdirSync(gc, { recursive: true, mode: 0o700 });
});
afterEach(() => f.rmrf(T));

const mkfifo = requirement('a FIFO at the lock path', ['cmd:mkfifo']);

/** A sweep (or dry run) that must end at once, whatever sits at the lock path. */
function sweep(args: string[] = []): { status: number | null; rep: Report; stderr: string } {
  const r = f.runCli(['--json', ...args], T, {}, 20_000);
  return { status: r.status, rep: f.json<Report>(r), stderr: r.stderr };
}

function debrisSaid(rep: Report): { target: string; code: string; detail: string }[] {
  return rep.skipped.filter((s) => s.code === 'lock_debris');
}

describe('debris at the sweep lock', () => {
  it('a regular file there, however fresh, is removed and the sweep proceeds', () => {
    fs.writeFileSync(lock, 'garbage');
    const r = sweep();
    expect(r.status, r.stderr).toBe(0);
    expect(debrisSaid(r.rep)).toEqual([
      expect.objectContaining({
        target: lock,
        detail: expect.stringContaining('was a regular file, not a murmur-gc lock: removed it'),
      }),
    ]);
    expect(fs.existsSync(lock)).toBe(false);
    // and the next sweep has nothing to say about it
    expect(debrisSaid(sweep().rep)).toEqual([]);
  });

  it.runIf(mkfifo.run)(
    'a FIFO there is never opened: the dry run says it would go and leaves it; the sweep removes it',
    () => {
      mkfifo.check();
      execFileSync('mkfifo', [lock]);
      const dry = sweep(['--dry-run']);
      expect(dry.status, dry.stderr).toBe(0);
      expect(debrisSaid(dry.rep)).toEqual([
        expect.objectContaining({
          target: lock,
          detail: expect.stringContaining('was a FIFO, not a murmur-gc lock: would remove it'),
        }),
      ]);
      expect(fs.lstatSync(lock).isFIFO()).toBe(true);
      const r = sweep();
      expect(r.status, r.stderr).toBe(0);
      expect(debrisSaid(r.rep)).toHaveLength(1);
      expect(fs.existsSync(lock)).toBe(false);
    },
  );

  it('a symbolic link there is removed as a link: its target is never touched', () => {
    const elsewhere = path.join(T, 'elsewhere');
    fs.mkdirSync(elsewhere);
    fs.writeFileSync(path.join(elsewhere, 'keep.txt'), 'keep');
    fs.symlinkSync(elsewhere, lock);
    const r = sweep();
    expect(r.status, r.stderr).toBe(0);
    expect(debrisSaid(r.rep)).toEqual([
      expect.objectContaining({ detail: expect.stringContaining('was a symbolic link') }),
    ]);
    expect(fs.existsSync(lock)).toBe(false);
    expect(fs.readFileSync(path.join(elsewhere, 'keep.txt'), 'utf8')).toBe('keep');
  });

  it('a directory holding a foreign file, with no holder and untouched for longer than a lock lives, is removed whole', () => {
    fs.mkdirSync(lock);
    fs.writeFileSync(path.join(lock, 'foreign.txt'), 'x');
    const old = (Date.now() - 120_000) / 1000;
    fs.utimesSync(lock, old, old);
    const r = sweep();
    expect(r.status, r.stderr).toBe(0);
    expect(debrisSaid(r.rep)).toEqual([
      expect.objectContaining({ detail: expect.stringContaining('a directory holding 1 entry, with no holder') }),
    ]);
    expect(fs.existsSync(lock)).toBe(false);
    expect(fs.readdirSync(gc).filter((n) => n.startsWith('.murmur-gc-'))).toEqual([]);
  });

  it('a fresh directory with no holder may be a lock being taken: not removed, the sweep is told it is busy', () => {
    fs.mkdirSync(lock);
    fs.writeFileSync(path.join(lock, 'foreign.txt'), 'x');
    const r = f.runCli(['--json'], T, {}, 20_000);
    expect(r.status).toBe(75);
    expect(fs.existsSync(path.join(lock, 'foreign.txt'))).toBe(true);
  });
});
