#!/usr/bin/env python3
"""Writes the Debian package's copyright file (Debian's machine-readable
format 1.0) from cargo-about's JSON reports, one per line on stdin (one per
crate whose binary the package holds), and `cargo metadata`.

The file holds fspace's own paragraph, then one stand-alone paragraph per
licence the package is distributed under, with the licence's text (or, for
Apache-2.0, where Debian keeps it) and, in its comment, every crate linked in
under it. A crate offered under alternatives ("MIT OR Apache-2.0") is listed
under the one cargo-about chose (ci/about.toml orders them), with its own
expression beside it. "Linked in" is what the binaries are made of: the
normal dependencies of fspace-cli, fspace-capi and fspace-preload, without
procedural macros and what only they use (they run inside the compiler).
Run from the repository's root (LICENSE-MIT); ci/deb.sh runs it."""

import json
import re
import subprocess
import sys

ROOTS = {"fspace-cli", "fspace-capi", "fspace-preload"}
OWN = ROOTS | {"fspace"}


def linked_crates():
    """(name, version) of every package linked into the roots' binaries."""
    host = re.search(r"^host: (\S+)$", subprocess.run(
        ["rustc", "-vV"], check=True, capture_output=True, text=True).stdout, re.M).group(1)
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--filter-platform", host],
        check=True, capture_output=True, text=True).stdout)
    pkgs = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    todo = [i for i, p in pkgs.items() if p["name"] in ROOTS and i in nodes]
    seen = set()
    while todo:
        i = todo.pop()
        if i in seen:
            continue
        seen.add(i)
        for dep in nodes[i]["deps"]:
            normal = any(k["kind"] is None for k in dep["dep_kinds"])
            macro = any("proc-macro" in t["kind"] for t in pkgs[dep["pkg"]]["targets"])
            if normal and not macro:
                todo.append(dep["pkg"])
    return {(pkgs[i]["name"], pkgs[i]["version"]) for i in seen}


def block(text):
    """A multi-line field value: each line indented, empty lines as " .\""""
    lines = text.strip("\n").splitlines()
    return "\n".join(" " + l.rstrip() if l.strip() else " ." for l in lines)


def main():
    linked = linked_crates()
    expr = {}  # (name, version) -> the crate's own licence expression
    authors = {}  # (name, version) -> its manifest's authors
    chosen = {}  # (name, version) -> licence ids it is distributed under here
    owners = {}  # (name, version) -> copyright lines from its licence files
    texts = {"MIT": open("LICENSE-MIT").read()}
    for line in sys.stdin:
        if not line.strip():
            continue
        report = json.loads(line)
        for c in report["crates"]:
            key = (c["package"]["name"], c["package"]["version"])
            expr[key] = c["license"]
            authors[key] = [re.sub(r"\s*<[^>]*>", "", a) for a in c["package"]["authors"]]
        for lic in report["licenses"]:
            texts.setdefault(lic["id"], lic["text"])
            for used in lic["used_by"]:
                key = (used["crate"]["name"], used["crate"]["version"])
                chosen.setdefault(key, set()).add(lic["id"])
                for l in lic["text"].splitlines():
                    l = l.strip()
                    if re.match(r"(?i)^copyright\b.*(\d{4}|\(c\)|©)", l):
                        owners.setdefault(key, set()).add(re.sub(r"(?i)^copyright\s*", "", l))
    crates = sorted(k for k in linked if k[0] not in OWN)
    missing = [f"{n} {v}" for n, v in crates if (n, v) not in chosen]
    if missing:
        sys.exit(f"deb-copyright: cargo-about reported no licence for {missing}")
    out = [
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
        "Upstream-Name: fspace",
        "Comment: The fspace command, libfspace.so, libfspace.a and",
        " libfspace-preload.so are written in Rust and link in the crates listed",
        " in the licence paragraphs below (from Cargo.lock, by cargo-about), each",
        " under the licence it names; a crate offered under alternatives is",
        " listed under the one this package uses, its own expression beside it.",
        " They also hold the parts of the Rust standard library they use (std,",
        " core, alloc), under MIT or Apache-2.0, as the Rust toolchain",
        " distributes it.",
        "",
        "Files: *",
        "Copyright: the fspace developers",
        "License: MIT or Apache-2.0",
    ]
    used = {"MIT", "Apache-2.0"} | {i for k in crates for i in chosen[k]}
    for lic_id in sorted(used):
        if lic_id == "Apache-2.0":
            body = ("On Debian systems, the complete text of the Apache License 2.0 is in\n"
                    "/usr/share/common-licenses/Apache-2.0.")
        elif lic_id in texts:
            body = texts[lic_id]
        else:
            sys.exit(f"deb-copyright: no text for licence {lic_id}")
        out += ["", f"License: {lic_id}", block(body)]
        under = [k for k in crates if lic_id in chosen[k]]
        if under:
            out.append("Comment: Linked in under this licence:")
            for name, version in under:
                # Its licence files' copyright lines, else its manifest's authors.
                who = "; ".join(sorted(owners.get((name, version), []))) or ", ".join(
                    authors.get((name, version), [])) or f"the {name} authors"
                out.append(f" {name} {version} ({expr.get((name, version), '?')}): {who}")
    print("\n".join(out))


main()
