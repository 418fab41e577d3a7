// The home rule (src/config/home.ts): which directories murmur-gc accepts as the murmur home.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HOME_MARKERS, judgeHome, systemPathReason } from '../../src/config/home.js';
import { rmrf, tempDir } from '../helpers/fixtures.js';

let T: string;
beforeEach(() => {
  T = fs.realpathSync(tempDir('home-rule'));
});
afterEach(() => rmrf(T));

describe('system paths', () => {
  it.each([
    ['/', 'is the root directory'],
    ['/etc', 'is a system directory'],
    ['/usr', 'is a system directory'],
    ['/var', 'is a system directory'],
    ['/home', 'holds your home directory ($HOME)'],
    ['/root', 'is a system directory'],
    ['/tmp', 'is a system directory'],
    ['/srv', 'is a system directory'],
    ['/usr/lib', 'is a system directory (directly in /usr)'],
    ['/usr/local/bin', 'is a system directory (directly in /usr/local)'],
    ['/var/tmp', 'is a system directory (directly in /var)'],
    ['/etc/ssh', 'is a system directory (directly in /etc)'],
    ['/run/user/1000', 'is a system directory (directly in /run/user)'],
    ['/home/bob', 'is a system directory (directly in /home)'],
    ['/mnt/data', 'is a system directory (directly in /mnt)'],
    ['/proc/self/cwd', 'is inside a kernel filesystem'],
    ['/sys/fs/cgroup/x/y', 'is inside a kernel filesystem'],
    ['/dev/shm/m', 'is inside a kernel filesystem'],
    ['/home/alice', 'is your home directory ($HOME) itself'],
    ['/home/alice/', 'is your home directory ($HOME) itself'],
    ['/data/users', 'holds your home directory ($HOME)'],
  ])('%s %s', (p, why) => {
    expect(systemPathReason(p, ['/home/alice', '/data/users/alice'])).toBe(why);
  });

  it.each([
    '/home/alice/.murmur',
    '/home/alice/work/mur',
    '/srv/murmur',
    '/opt/murmur',
    '/var/lib/murmur',
    '/tmp/x/home',
    '/tmp/murmur',
    '/.murmur',
    '/data/murmur',
  ])('%s is not one', (p) => {
    expect(systemPathReason(p, ['/home/alice'])).toBeUndefined();
  });
});

describe('an existing directory as the home', () => {
  it('is one when it holds any of the murmur home entries as a directory, or nothing at all', async () => {
    for (const m of HOME_MARKERS) {
      const h = path.join(T, `h-${m}`);
      fs.mkdirSync(path.join(h, m), { recursive: true });
      fs.writeFileSync(path.join(h, 'other'), '');
      expect(await judgeHome(h, [])).toBeUndefined();
    }
    fs.mkdirSync(path.join(T, 'fresh'));
    expect(await judgeHome(path.join(T, 'fresh'), [])).toBeUndefined();
    expect(await judgeHome(path.join(T, 'missing'), [])).toBeUndefined();
  });

  it('is not one when it holds other things only (a marker that is a file or a link does not count)', async () => {
    const h = path.join(T, 'project');
    fs.mkdirSync(path.join(h, 'src'), { recursive: true });
    fs.writeFileSync(path.join(h, 'state'), 'a file named state');
    fs.symlinkSync(T, path.join(h, 'gc'));
    expect(await judgeHome(h, [])).toBe(
      'is not a murmur home: it holds 3 entries and none of conversations/, running/, state/, spend/, compiled/, formations/, gc/',
    );
  });

  it('a link to a system directory is judged by where it leads', async () => {
    fs.symlinkSync('/etc', path.join(T, 'etc-link'));
    expect(await judgeHome(path.join(T, 'etc-link'), [])).toBe('resolves to /etc, which is a system directory');
    fs.symlinkSync(T, path.join(T, 'home-link'));
    expect(await judgeHome(path.join(T, 'home-link'), [T])).toBe(
      `resolves to ${T}, which is your home directory ($HOME) itself`,
    );
  });
});
