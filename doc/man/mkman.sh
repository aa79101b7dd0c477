#!/bin/sh
# mkman.sh: one manual page, in roff, from its Markdown source.
#
#   doc/man/mkman.sh PANDOC VERSION doc/man/NAME.SECTION.md OUTPUT
#
# The source is pandoc Markdown.  A line of it
#
#     <!-- include TOPIC.md TAG -->
#
# stands for every block of doc/TOPIC.md that lies between a line
# "<!-- man: TAG -->" and the next line "<!-- /man -->", in their order.
# The topic pages of doc/ so hold each option, command, hint and
# environment variable once, for the reader of doc/ and for the manual
# pages alike (doc/source.md, "The manual").  An include that finds no
# block, or a block left open, is an error; so is any failure of pandoc.
set -eu
pandoc=$1 version=$2 src=$3 out=$4
docdir=$(cd "$(dirname "$src")/.." && pwd)
page=$(basename "$src" .md)             # NAME.SECTION
name=${page%.*} section=${page##*.}
title=$(echo "$name" | tr 'a-z' 'A-Z')
tmp=$out.md.tmp
trap 'rm -f "$tmp" "$out.tmp"' EXIT

awk -v docdir="$docdir" -v src="$src" '
function include(topic, tag,    file, line, inside, n, rc) {
    file = docdir "/" topic
    inside = 0; n = 0
    while ((rc = getline line < file) > 0) {
        if (line ~ /^<!-- man: / && !inside) {
            split(line, w, " ")
            if (w[3] == tag) { inside = 1; n++; print ""; continue }
        } else if (line ~ /^<!-- \/man -->/ && inside) {
            inside = 0; print ""; continue
        }
        if (inside)
            print line
    }
    if (rc < 0) { printf "mkman: %s: cannot read %s\n", src, file > "/dev/stderr"; exit 1 }
    close(file)
    if (inside) { printf "mkman: %s: a block \"%s\" is not closed\n", file, tag > "/dev/stderr"; exit 1 }
    if (n == 0) { printf "mkman: %s: no block \"%s\" in %s\n", src, tag, file > "/dev/stderr"; exit 1 }
}
/^<!-- include [^ ]+ [^ ]+ -->$/ { include($3, $4); next }
{ print }
' "$src" >"$tmp"

# No hyphenation: option names must stay whole.  Left-adjusted text.
"$pandoc" --standalone --from markdown-smart --to man \
    --metadata title="$title" --metadata section="$section" \
    --metadata header="iPVFS Manual" --metadata footer="iPVFS $version" \
    --metadata hyphenate=false --variable adjusting=l \
    --output "$out.tmp" "$tmp"
mv "$out.tmp" "$out"
