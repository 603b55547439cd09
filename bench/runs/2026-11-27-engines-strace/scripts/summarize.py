#!/usr/bin/env python3
"""Summarize an strace -f -y log: per path-class, syscall counts, write-size histograms, zero-data writes, open flags."""
import re, sys, collections
fn = sys.argv[1]
classify = sys.argv[2] if len(sys.argv) > 2 else None  # regex to normalize paths
ops = collections.defaultdict(collections.Counter)
opens = collections.defaultdict(collections.Counter)
other = []
def norm(p):
    p = re.sub(r'/var/tmp/engres/mnt/[^/]+/[^/]+/', '<D>/', p)
    p = re.sub(r'\b[0-9A-F]{24}\b', 'WALSEG', p)
    p = re.sub(r'(base/\d+/)\d+', r'\1<rel>', p)
    p = re.sub(r'\b\d{6}\.(log|sst)\b', r'NNNNNN.\1', p)
    p = re.sub(r'(MANIFEST|OPTIONS)-\d+', r'\1-N', p)
    p = re.sub(r'(/dev/shm/PostgreSQL)\.\d+', r'\1.N', p)
    p = re.sub(r'sbtest\d+', 'sbtestN', p)
    return p
pat = re.compile(r'^(\d+)\s+(?:[\d:.]+\s+)?(\w+)\((.*)\)\s+=\s+(-?\w+|\?)(.*)$')
for line in open(fn, errors='replace'):
    if line.rstrip().endswith('<unfinished ...>'):
        line = line.rstrip()[:-len('<unfinished ...>')].rstrip() + ') = ?\n'
        line = line.replace(',) = ?', ') = ?')
    m = pat.match(line)
    if not m: continue
    pid, sc, args, ret, rest = m.groups()
    if sc in ('openat','open'):
        mm = re.search(r'"([^"]*)", ([A-Z_|]+)', args)
        if not mm: continue
        r = re.search(r'= -?\d+<([^>]*)>', line)
        path = r.group(1) if r else mm.group(1)
        if ret.startswith('-'):
            path = mm.group(1) + ' (' + ret + rest.strip()[:30] + ')'
        opens[norm(path)][mm.group(2)] += 1
        continue
    mm = re.match(r'(\d+)<([^>]*)>(?:, (.*))?', args)
    if sc in ('rename','renameat','renameat2','unlink','unlinkat'):
        other.append(norm(line.split(None,1)[1].strip())); 
        ops['<namespace>'][sc] += 1
        continue
    if not mm: continue
    path = norm(mm.group(2)); rest_args = mm.group(3) or ''
    key = sc
    if sc in ('pwrite64','write'):
        sm = re.match(r'"((?:[^"\\]|\\.)*)"(\.\.\.)?, (\d+)', rest_args)
        if sm:
            data, size = sm.group(1), int(sm.group(3))
            z = 'zero' if re.fullmatch(r'(\\0)+', data) else 'data'
            key = f'{sc} {size}B {z}'
    elif sc == 'fallocate':
        key = 'fallocate(' + ', '.join(rest_args.split(', ')[0:3]) + ')'
    elif sc == 'ftruncate':
        key = 'ftruncate(' + rest_args + ')'
    elif sc == 'sync_file_range':
        key = 'sync_file_range(flags=' + rest_args.split(', ')[-1] + ')'
    elif sc == 'pwritev' or sc=='pwritev2':
        key = sc + ' ret=' + ret
    if ret.startswith('-'): key += ' => ' + ret + rest.strip()[:25]
    ops[path][key] += 1
print("== opens (path: flags x count)")
for p, c in sorted(opens.items()):
    print(f"  {p}: " + '; '.join(f'{k} x{v}' for k, v in c.most_common()))
print("== per-file ops")
for p, c in sorted(ops.items()):
    print(f"  {p}:")
    for k, v in sorted(c.items(), key=lambda kv: -kv[1])[:25]:
        print(f"      {v:6d}  {k}")
print("== renames/unlinks")
for o in collections.Counter(other).most_common(40): print(f"  {o[1]:4d} {o[0][:230]}")
