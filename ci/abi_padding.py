#!/usr/bin/env python3
"""Every public struct of the C API (fspace_*) has no padding: its fields
follow each other without a hole and the last one ends at its size.

Why (docs/capi.md, "Structs that grow"): a struct grows by fields after its
last one, and the size the caller passes tells the library which fields it
has. A field put into tail padding would not change `sizeof`, so an older
library could not see that a newer program set it; and padding bytes of an
output would carry whatever the library's memory held. Padding is spelled
out as `reserved` fields instead, which stay zero.

Reads an abidw XML file (ci/abi.sh writes one of the library it checks)
and checks the structs the C header defines (`typedef struct NAME {`), not
the opaque handles, whose insides are Rust's and private.
Usage: ci/abi_padding.py FILE.abi HEADER.h"""
import re
import sys
import xml.etree.ElementTree as ET


def main(path, header):
    public = set(re.findall(r"^typedef struct (\w+) \{", open(header).read(), re.M))
    if not public:
        print(f"abi: no struct defined in {header}", file=sys.stderr)
        return 1
    root = ET.parse(path).getroot()
    sizes, targets, structs = {}, {}, []
    for el in root.iter():
        tid = el.get("id")
        if tid is None:
            continue
        if el.get("size-in-bits") is not None:
            sizes[tid] = int(el.get("size-in-bits"))
        elif el.tag in ("typedef-decl", "qualified-type-def"):
            targets[tid] = el.get("type-id")
        elif el.tag == "enum-decl":
            under = el.find("underlying-type")
            if under is not None:
                targets[tid] = under.get("type-id")
        if el.tag == "class-decl" and el.get("name") in public \
                and el.get("is-declaration-only") != "yes":
            structs.append(el)

    def size_of(tid):
        seen = set()
        while tid not in sizes and tid in targets and tid not in seen:
            seen.add(tid)
            tid = targets[tid]
        return sizes.get(tid)

    bad, checked = [], set()
    for s in structs:
        name = s.get("name")
        if name in checked:
            continue
        checked.add(name)
        total = int(s.get("size-in-bits", 0))
        at = 0
        for m in s.findall("data-member"):
            off = int(m.get("layout-offset-in-bits"))
            var = m.find("var-decl")
            field = var.get("name")
            size = size_of(var.get("type-id"))
            if size is None:
                bad.append(f"{name}.{field}: size unknown to this check")
                continue
            if off != at:
                bad.append(f"{name}: {(off - at) // 8} bytes of padding before {field}")
            at = off + size
        if at != total and s.findall("data-member"):
            bad.append(f"{name}: {(total - at) // 8} bytes of padding at its end (sizeof {total // 8})")
    missing = public - checked
    if missing:
        bad.append(f"structs of the header not in the library's description: {sorted(missing)}")
    if bad:
        print("abi: structs with padding (spell it out as a reserved field):", file=sys.stderr)
        for b in bad:
            print("  " + b, file=sys.stderr)
        return 1
    print(f"abi: {len(checked)} public structs, none with padding")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
