#!/bin/bash
# The manual against the code (doc/source.md, "The manual"):
#   - `make install-man` puts the six pages under share/man/man{1,7,8};
#   - each installed page renders with `MANWIDTH=80 man --warnings -l`
#     without a warning;
#   - every option (and, for ipvfs-ctl, every command) of each program's
#     --help is an entry of its page's OPTIONS, COMMANDS or ENVIRONMENT,
#     and every option of those entries is in the --help (--help itself
#     aside); no page has the same entry twice;
#   - the hints adio/ad_ipvfs/ad_ipvfs.h lists (a superset of the keys
#     ad_ipvfs_hints.c accepts) are exactly the entries of ipvfs(7)'s
#     HINTS, and the IPVFS_* variables the code reads (getenv,
#     client_env_ms) exactly those of its ENVIRONMENT;
#   - every page of doc/ starts with the question it answers, and the
#     README names every one of them.
# An option added to a --help without its entry in a topic page fails it.
# timeout: 60
set -u
. "$IPVFS_SRCDIR/test/lib.sh"

command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
command -v man >/dev/null || { echo "skip: no man (man-db)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-doc.XXXXXX") || ipvfs_fail "mktemp"
ipvfs_test_cleanup() { rm -rf "$tmp"; }

pages="ipvfs-server.8 ipvfs-ctl.1 ipvfs-fuse.1 ipvfs-target.8 ipvfs-cachesim.1 ipvfs-model.1 ipvfs.7"

# Installed where make install puts them (built first if out of date).
make -s -C "$IPVFS_BUILDDIR" install-man DESTDIR="$tmp/stage" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; ipvfs_fail "make install-man failed"; }
mkdir -p "$tmp/man"
for p in $pages; do
    f=$(find "$tmp/stage" -path "*/share/man/man${p##*.}/$p" -type f)
    [ -n "$f" ] || ipvfs_fail "make install-man did not install share/man/man${p##*.}/$p"
    cp "$f" "$tmp/man/$p"
    warn=$(MANWIDTH=80 man --warnings -l "$tmp/man/$p" 2>&1 >"$tmp/man/$p.txt")
    [ -z "$warn" ] || ipvfs_fail "man --warnings -l $p: $warn"
    grep -q '^NAME' "$tmp/man/$p.txt" || ipvfs_fail "$p renders without a NAME section"
    echo "$p: installed, $(wc -l <"$tmp/man/$p.txt") lines at 80 columns, no warnings"
done

# Each program's --help (the server's works as an MPI singleton; ipvfs-ctl
# and ipvfs-cachesim print it on stderr with status 2; ipvfs-fuse's ends
# with libfuse's own options, left out below).
help() {
    timeout 20 "$@" --help 2>&1
    return 0
}
help "$IPVFS_BUILDDIR/backend/ipvfs-server" >"$tmp/ipvfs-server.help"
help "$IPVFS_BUILDDIR/tools/ipvfs-ctl" >"$tmp/ipvfs-ctl.help"
help "$IPVFS_BUILDDIR/fuse/ipvfs-fuse" >"$tmp/ipvfs-fuse.help"
help "$IPVFS_BUILDDIR/backend/ipvfs-target" >"$tmp/ipvfs-target.help"
help "$IPVFS_BUILDDIR/tools/ipvfs-cachesim" >"$tmp/ipvfs-cachesim.help"
help "$IPVFS_BUILDDIR/tools/ipvfs-model" >"$tmp/ipvfs-model.help"
for p in ipvfs-server ipvfs-ctl ipvfs-fuse ipvfs-target ipvfs-cachesim ipvfs-model; do
    grep -q '^usage: ' "$tmp/$p.help" || ipvfs_fail "$p --help printed no usage: $(head -3 "$tmp/$p.help")"
done

python3 - "$IPVFS_SRCDIR" "$tmp" <<'PY' || ipvfs_fail "the manual and the code disagree (above)"
import os, re, sys

src, tmp = sys.argv[1], sys.argv[2]
bad = []

LONG = re.compile(r'--[a-z0-9][a-z0-9-]*')
SHORT = re.compile(r'(?:^|(?<=[\s\[]))-[a-zA-Z](?![\w-])')
OPTWORD = re.compile(r'\b[a-z]+_[a-z_]+\b')      # -o direct_io, attr_timeout=S
ENV = re.compile(r'\bIPVFS_[A-Z_]+\b')


def tokens(text, commands):
    out = set(LONG.findall(text)) | set(SHORT.findall(text))
    out |= set(OPTWORD.findall(text)) | set(ENV.findall(text))
    if commands:
        m = re.match(r'([a-z]+)\b', text)
        if m:
            out.add(m.group(1))
    return out


def help_tokens(path, prog, commands):
    """Tokens of the usage lines (after the program's name) and of the
    terms of the item lines (two spaces, then the term up to two spaces
    or the end of the line)."""
    out, in_usage = set(), False
    for line in open(path, errors='replace'):
        line = line.rstrip('\n')
        if "libfuse's options:" in line:
            break
        if line.startswith('usage: '):
            out |= tokens(line.split(prog, 1)[-1], False)
            in_usage = True
            continue
        if in_usage and re.match(r'\s+\[', line):
            out |= tokens(line, False)
            continue
        in_usage = False
        m = re.match(r'  (\S.*?)(?:  |$)', line)
        if m:
            out |= tokens(m.group(1), commands)
    return out


def roff_text(s):
    s = re.sub(r'\\f(\[[A-Z]*\]|[A-Z])', '', s)
    s = s.replace('\\-', '-').replace('\\[ga]', '`').replace('\\[aq]', "'")
    s = s.replace('\\~', ' ').replace('\\ ', ' ').replace('\\&', '')
    return s


def man_terms(path, sections):
    """The terms (the line after .TP) of the given sections, as text."""
    terms, section, want = [], None, False
    for line in open(path):
        line = line.rstrip('\n')
        if line.startswith('.SH '):
            section = line[4:].strip().strip('"')
            continue
        if want:
            terms.append((section, roff_text(line)))
            want = False
        elif line == '.TP' and section in sections:
            want = True
    return terms


programs = {'ipvfs-server': 'ipvfs-server.8', 'ipvfs-ctl': 'ipvfs-ctl.1',
            'ipvfs-fuse': 'ipvfs-fuse.1', 'ipvfs-target': 'ipvfs-target.8',
            'ipvfs-cachesim': 'ipvfs-cachesim.1', 'ipvfs-model': 'ipvfs-model.1'}
for prog, page in programs.items():
    commands = prog == 'ipvfs-ctl'
    h = help_tokens(os.path.join(tmp, prog + '.help'), prog, commands)
    terms = man_terms(os.path.join(tmp, 'man', page), ('OPTIONS', 'COMMANDS', 'ENVIRONMENT'))
    m = set()
    for _, t in terms:
        m |= tokens(t, commands)
    seen = set()
    for _, t in terms:
        if t in seen:
            bad.append('%s: the entry "%s" is there twice' % (page, t))
        seen.add(t)
    for t in sorted(h - m):
        bad.append('%s --help has %s, its page %s does not' % (prog, t, page))
    for t in sorted(m - h - {'--help', '-h'}):
        bad.append('%s documents %s, %s --help does not' % (page, t, prog))
    print('%s: %d options and commands in --help and %s' % (prog, len(h), page))

# Hints: ad_ipvfs.h's list (the key names at three spaces in its "Hints"
# paragraph, and ROMIO's named in its first sentence).
hdr = open(os.path.join(src, 'adio/ad_ipvfs/ad_ipvfs.h')).read().split('\n')
start = next(i for i, l in enumerate(hdr) if l.startswith(' * Hints ('))
end = next(i for i in range(start, len(hdr)) if hdr[i].startswith(' * A striping value'))
hints = set()
intro = ''
for i in range(start, end):
    l = hdr[i]
    m = re.match(r' \*   ([a-z_]+)\s', l)
    if m:
        hints.add(m.group(1))
    elif not hints:
        intro += l
for word in re.findall(r'\b[a-z]+_[a-z_]+(?:/[a-z]+)?', intro.split('):')[0]):
    base, _, alt = word.partition('/')
    hints.add(base)
    if alt:
        hints.add(base.rsplit('_', 1)[0] + '_' + alt)
if len(hints) < 10:
    bad.append('ad_ipvfs.h: found only %s as its hints (has its list moved?)' % sorted(hints))
keys = open(os.path.join(src, 'adio/ad_ipvfs/ad_ipvfs_hints.c')).read()
arr = re.search(r'ipvfs_keys\[\]\s*=\s*\{(.*?)\}', keys, re.S)
accepted = set(re.findall(r'"([a-z_]+)"', arr.group(1))) if arr else set()
if not accepted:
    bad.append('ad_ipvfs_hints.c: no ipvfs_keys[] array found')
for k in sorted(accepted - hints):
    bad.append('ad_ipvfs_hints.c accepts the hint %s, ad_ipvfs.h does not list it' % k)
man_hints = [t.split()[0] for _, t in man_terms(os.path.join(tmp, 'man', 'ipvfs.7'), ('HINTS',))]
for k in sorted(set(man_hints)):
    if man_hints.count(k) > 1:
        bad.append('ipvfs(7) has the hint %s twice' % k)
for k in sorted(hints - set(man_hints)):
    bad.append('ad_ipvfs.h lists the hint %s, ipvfs(7) does not' % k)
for k in sorted(set(man_hints) - hints):
    bad.append('ipvfs(7) documents the hint %s, ad_ipvfs.h does not list it' % k)
print('hints: %d in ad_ipvfs.h and ipvfs(7)' % len(hints))

# Environment variables the code reads.
env = set()
for d in ('adio', 'backend', 'common', 'fuse', 'tools', 'iraid', 'cache'):
    for root, _, files in os.walk(os.path.join(src, d)):
        for f in files:
            if f.endswith(('.c', '.h')):
                text = open(os.path.join(root, f), errors='replace').read()
                env |= set(re.findall(r'(?:getenv|client_env_ms)\(\s*"(IPVFS_[A-Z_]+)"', text))
man_env = [t.split()[0] for _, t in man_terms(os.path.join(tmp, 'man', 'ipvfs.7'), ('ENVIRONMENT',))]
for k in sorted(set(man_env)):
    if man_env.count(k) > 1:
        bad.append('ipvfs(7) has the variable %s twice' % k)
for k in sorted(env - set(man_env)):
    bad.append('the code reads %s, ipvfs(7) does not document it' % k)
for k in sorted(set(man_env) - env):
    bad.append('ipvfs(7) documents %s, which no code reads' % k)
print('environment: %d variables in the code and ipvfs(7)' % len(env))

# doc/: one page per topic, each starting with its question, each named
# by the README.
readme = open(os.path.join(src, 'README')).read()
for f in sorted(os.listdir(os.path.join(src, 'doc'))):
    if not f.endswith('.md'):
        continue
    lines = [l for l in open(os.path.join(src, 'doc', f)).read().split('\n\n')]
    first = lines[1] if len(lines) > 1 else ''
    if not (first.startswith('*') and first.rstrip().endswith('?*')):
        bad.append('doc/%s does not start with its question (*...?*) under its title' % f)
    if 'doc/' + f not in readme:
        bad.append('the README does not name doc/%s' % f)

for b in bad:
    print('FAIL: ' + b)
sys.exit(1 if bad else 0)
PY
echo "PASS: the manual pages, the --help texts, the hints and the environment agree"
