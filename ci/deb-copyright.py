#!/usr/bin/env python3
"""Writes the Debian package's copyright file (Debian's machine-readable
format 1.0) from cargo-about's JSON reports, one per line on stdin (one per
crate whose binary the package holds), and LICENSE-MIT and LICENSE-APACHE
from the current directory (the repository's root): fspace's own licence, one paragraph
per crate linked in (procedural macros run at build time and are left out)
with its licence expression and the copyright lines of its licence files,
then the text of each licence used. ci/deb.sh runs it."""

import json
import re
import sys

OWN = {"fspace", "fspace-cli", "fspace-capi", "fspace-preload"}


def dep5(expr):
    # SPDX "A OR B" is written "A or B" in Debian's format.
    return re.sub(r"\bOR\b", "or", re.sub(r"\bAND\b", "and", expr)).replace("/", " or ")


def block(text):
    """A multi-line field value: each line indented, empty lines as " .\""""
    lines = text.strip("\n").splitlines()
    return "\n".join(" " + l.rstrip() if l.strip() else " ." for l in lines)


def main():
    crates = {}  # (name, version) -> {"license": expr, "copyright": set}
    # licence id -> text: fspace's own two, then the first crate's copy of
    # each other licence.
    texts = {
        "MIT": open("LICENSE-MIT").read(),
        "Apache-2.0": open("LICENSE-APACHE").read(),
    }
    for line in sys.stdin:
        if not line.strip():
            continue
        report = json.loads(line)
        for c in report["crates"]:
            pkg = c["package"]
            if any("proc-macro" in t["kind"] for t in pkg["targets"]):
                continue
            key = (pkg["name"], pkg["version"])
            crates.setdefault(key, {"license": c["license"], "copyright": set()})
        for lic in report["licenses"]:
            texts.setdefault(lic["id"], lic["text"])
            for used in lic["used_by"]:
                key = (used["crate"]["name"], used["crate"]["version"])
                if key in crates:
                    for l in lic["text"].splitlines():
                        l = l.strip()
                        if re.match(r"(?i)^copyright\b.*(\d{4}|\(c\)|©)", l):
                            crates[key]["copyright"].add(l)
    if not crates:
        sys.exit("deb-copyright: no crates in cargo-about's reports")
    out = [
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
        "Upstream-Name: fspace",
        "Comment: The fspace command, libfspace.so and libfspace-preload.so are",
        " written in Rust and link in the crates listed below, each under its own",
        " licence (read from the crate by cargo-about, from Cargo.lock). A crate",
        " is shown by its name and version on crates.io.",
        "",
        "Files: *",
        "Copyright: the fspace developers",
        "License: MIT or Apache-2.0",
    ]
    for (name, version), c in sorted(crates.items()):
        if name in OWN:
            continue
        owners = sorted(c["copyright"]) or [f"the {name} authors"]
        out += [
            "",
            f"Files: crates.io/{name}-{version}/*",
            "Copyright: " + "\n ".join(re.sub(r"(?i)^copyright\s*", "", o) for o in owners),
            f"License: {dep5(c['license'])}",
        ]
    for lic_id in sorted(texts):
        out += ["", f"License: {lic_id}", block(texts[lic_id])]
    # Every crate's expression has an alternative whose text is here, so the
    # file stands alone.
    for (name, version), c in crates.items():
        # "(MIT OR Apache-2.0) AND Unicode-3.0": each part of an AND needs
        # one of its alternatives.
        for part in re.split(r"\bAND\b", c["license"].replace("(", "").replace(")", "")):
            alternatives = [a.strip() for a in re.split(r"\bOR\b|/", part)]
            if not any(a in texts for a in alternatives):
                sys.exit(f"deb-copyright: no licence text for {name} {version} ({c['license']})")
    print("\n".join(out))


main()
