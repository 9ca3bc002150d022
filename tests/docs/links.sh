#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The repository carries its own documentation: every relative link of every Markdown file
# resolves to a file of the repository (and a #fragment to a heading of the Markdown file it
# names), and no file points at the design notes kept outside the repository.
set -euo pipefail
src=$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/../..}" && pwd)
# shellcheck source=tests/check.sh
source "$src/tests/check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the files of the tree: tracked and new ones, without what .gitignore leaves out (builds)
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$src" ls-files -z --cached --others --exclude-standard >"$tmp/files"
else
    (cd "$src" && find . -path ./.git -prune -o -path './build*' -prune -o -name node_modules \
        -prune -o -type f -print0 | sed -z 's|^\./||') >"$tmp/files"
fi

# Markdown links: [text](target), [text](<target>) and [ref]: target, outside code blocks and
# code spans; a target with a scheme (https:, mailto:) is not the repository's
python3 - "$src" "$tmp/files" >"$tmp/links" <<'PY'
import os, re, sys, unicodedata
root, listing = sys.argv[1], sys.argv[2]
files = [f for f in open(listing, "rb").read().decode().split("\0") if f]
present = set(files)
dirs = {os.path.dirname(f) for f in files}
while any(d and os.path.dirname(d) not in dirs for d in dirs):
    dirs |= {os.path.dirname(d) for d in dirs}
mds = [f for f in files if f.endswith(".md") and os.path.isfile(os.path.join(root, f))]

def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation but '-' and '_' dropped, spaces
    to '-'."""
    h = re.sub(r"`([^`]*)`", r"\1", heading.strip().lower())
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)
    out = []
    for ch in h:
        cat = unicodedata.category(ch)
        if ch in "-_" or cat[0] in "LN" or cat == "Mn":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)

anchors_of = {}
def anchors(path):
    if path not in anchors_of:
        seen, result, fence = {}, set(), False
        for line in open(os.path.join(root, path), encoding="utf-8"):
            if re.match(r"^\s*(```|~~~)", line):
                fence = not fence
                continue
            m = None if fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                result.add(s if n == 0 else f"{s}-{n}")
            for a in re.findall(r'<a\s+(?:name|id)="([^"]+)"', line):
                result.add(a)
        anchors_of[path] = result
    return anchors_of[path]

link_re = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
ref_re = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
for md in sorted(mds):
    fence = False
    for n, line in enumerate(open(os.path.join(root, md), encoding="utf-8"), 1):
        if re.match(r"^\s*(```|~~~)", line):
            fence = not fence
            continue
        if fence:
            continue
        text = re.sub(r"`[^`]*`", "", line)
        targets = [m.group(1) for m in link_re.finditer(text)]
        m = ref_re.match(text)
        if m:
            targets.append(m.group(1))
        for t in targets:
            t = t.strip("<>")
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", t):
                continue
            path, _, frag = t.partition("#")
            if path:
                rel = os.path.normpath(os.path.join(os.path.dirname(md), path))
                if rel.startswith("..") or os.path.isabs(path):
                    print(f"{md}:{n}: {t}: leads out of the repository")
                    continue
                if rel not in present and rel not in dirs:
                    print(f"{md}:{n}: {t}: no such file in the repository")
                    continue
            else:
                rel = md
            if frag and rel.endswith(".md") and frag not in anchors(rel):
                print(f"{md}:{n}: {t}: {rel} has no heading #{frag}")
        # counted for the summary
        print(f"#checked {len(targets)}")
PY
bad=$(grep -v '^#checked' "$tmp/links" || true)
nlinks=$(awk '/^#checked/ {n += $2} END {print n + 0}' "$tmp/links")
nmd=$(tr '\0' '\n' <"$tmp/files" | grep -c '\.md$' || true)
if [ -n "$bad" ]; then
    fail "relative links that resolve to nothing in the repository:"$'\n'"$bad"
else
    pass "every relative link of $nmd Markdown files resolves in the repository ($nlinks links)"
fi

# no pointer at the notes outside the repository (this script names them only as patterns)
notes='DESIGN\.md|shared/|localization\.md|mrc-notes|sim-notes|ecosystem-notes|hardening-notes'
notes="$notes|ha-notes|notes §"
(cd "$src" && tr '\0' '\n' <"$tmp/files" | grep -v '^tests/docs/links\.sh$' |
    while IFS= read -r f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
    xargs -0 grep -nIE -- "$notes" 2>/dev/null) >"$tmp/notes" || true
if [ -s "$tmp/notes" ]; then
    fail "files point at notes outside the repository:"$'\n'"$(head -20 "$tmp/notes")"
else
    pass "no file points at notes outside the repository"
fi

finish links.sh
