#!/usr/bin/env python3
"""excerpt.py STRACE OUT  SECTION-SPECS...   spec = 'label ;; regex ;; max ;; mode' mode=head|tail ; optional exclude after '!!' in regex"""
import re, sys
src, out = sys.argv[1], sys.argv[2]
lines = open(src, errors='replace').read().splitlines()
def short(l):
    l = re.sub(r'\[\{iov_base=.*\}\]', '[{iov_base="\\\\0\\\\0...", iov_len=8192} x32]', l)
    def rep(m):
        s = m.group(0)
        if '\\' in s or len(s) > 60:
            body = m.group(1)
            zero = re.fullmatch(r'(\\0)+', body) is not None
            return '"<zeros>"' if zero else '"<data>"'
        return s
    l = re.sub(r'"((?:[^"\\]|\\.)*)"(?:\.\.\.)?', rep, l)
    return l[:300]
with open(out, 'w') as f:
    f.write(f"# excerpts of {src.split('/')[-1]} (strace -f -y -tt); data buffers shown as <zeros>/<data>\n")
    for spec in sys.argv[3:]:
        label, rx, mx, mode = spec.split(' ;; ')
        ex = None
        if '!!' in rx: rx, ex = rx.split('!!')
        sel = [l for l in lines if re.search(rx, l) and not (ex and re.search(ex, l))]
        sel = sel[:int(mx)] if mode == 'head' else sel[-int(mx):]
        f.write(f"\n### {label}   [{len([l for l in lines if re.search(rx, l) and not (ex and re.search(ex, l))])} matching lines, showing {mode} {mx}]\n")
        f.write('\n'.join(short(l) for l in sel) + '\n')
