#!/usr/bin/env bash
# Builds a small, real, unencrypted PAL DVD-Video ISO for tests.
#   make-dvd-image.sh OUT.iso LABEL SECONDS...
# One title per SECONDS value (720x576, 25 fps, MPEG-2 + AC-3 48 kHz), a chapter mark every 5 s,
# all titles in one title set. Video bitrate is kept low so images stay small.
# Needs ffmpeg, dvdauthor and genisoimage.
set -euo pipefail

if [ "$#" -lt 3 ]; then
  echo "usage: $0 OUT.iso LABEL SECONDS..." >&2
  exit 2
fi

out=$1
label=$2
shift 2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

xml="$work/dvd.xml"
{
  printf '<dvdauthor dest="%s/DVD">\n' "$work"
  printf ' <vmgm/>\n <titleset>\n  <titles>\n'
} > "$xml"

n=0
for secs in "$@"; do
  n=$((n + 1))
  mpg="$work/title$n.mpg"
  ffmpeg -v error -nostdin \
    -f lavfi -i "testsrc2=size=720x576:rate=25,hue=h=$((n * 60))" \
    -f lavfi -i "sine=frequency=$((300 + n * 100)):sample_rate=48000" \
    -t "$secs" -target pal-dvd -b:v 400k -b:a 96k -aspect 16:9 -y "$mpg"
  chapters=0
  for ((mark = 5; mark < secs; mark += 5)); do chapters="$chapters,$mark"; done
  printf '   <pgc>\n    <vob file="%s" chapters="%s"/>\n   </pgc>\n' "$mpg" "$chapters" >> "$xml"
done

printf '  </titles>\n </titleset>\n</dvdauthor>\n' >> "$xml"

VIDEO_FORMAT=PAL dvdauthor -x "$xml" > "$work/dvdauthor.log" 2>&1 || { cat "$work/dvdauthor.log" >&2; exit 1; }
# The label goes into the Video Manager's provider id (32 bytes at 0x40 of VIDEO_TS.IFO and its backup),
# where a pressed disc names its studio: dvdauthor writes the same IFOs for titles of the same length,
# and the DVD disc id (an MD5 over the IFOs) would take two such images for one disc.
for ifo in "$work/DVD/VIDEO_TS/VIDEO_TS.IFO" "$work/DVD/VIDEO_TS/VIDEO_TS.BUP"; do
  printf '%-32.32s' "$label" | dd of="$ifo" bs=1 seek=64 conv=notrunc status=none
done
genisoimage -quiet -dvd-video -V "$label" -o "$out" "$work/DVD"
