#!/usr/bin/env bash
# Builds a real, unencrypted PAL DVD-Video ISO with one title in two languages, for tests and trials:
#   make-multilang-dvd-image.sh OUT.iso LABEL [SECONDS]
# audio 1: German AC-3 5.1, audio 2: English AC-3 2.0, subpicture 1: German, subpicture 2: English.
# The languages are written into the IFO by dvdauthor (VOBs carry none); spumux (from dvdauthor) renders
# two subtitle lines per language into DVD subpictures with the DejaVu Sans font.
# Optional content codes (the streams' roles, dvdauthor's words), German first, e.g.
#   DVD_AUDIO_CONTENT="normal comments1" DVD_SUBPICTURE_CONTENT="forced normal_cc"
# (audio: normal impaired comments1 comments2; subpictures: normal large children normal_cc large_cc
# children_cc forced director large_director children_director).
# Needs ffmpeg, dvdauthor, genisoimage and fonts-dejavu-core.
set -euo pipefail

if [ "$#" -lt 2 ]; then
  echo "usage: $0 OUT.iso LABEL [SECONDS]" >&2
  exit 2
fi
out=$(realpath -m "$1"); label=$2; secs=${3:-12}
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
[ -f "$font" ] || { echo "missing $font: install fonts-dejavu-core" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
ffmpeg -v error -nostdin -f lavfi -i "testsrc2=size=720x576:rate=25" \
  -f lavfi -i "sine=frequency=440:sample_rate=48000" -f lavfi -i "sine=frequency=660:sample_rate=48000" \
  -filter_complex "[1:a]pan=5.1|FL=c0|FR=c0|FC=c0|LFE=c0|BL=c0|BR=c0[a51]" \
  -map 0:v -map "[a51]" -map 2:a -t "$secs" -target pal-dvd -b:v 1500k -aspect 16:9 \
  -c:a ac3 -b:a 384k -ac:a:1 2 -y av.mpg
for lang in de en; do
  cat > "sub_$lang.srt" <<SRT
1
00:00:01,000 --> 00:00:04,000
Untertitel $lang eins

2
00:00:05,000 --> 00:00:08,000
Subtitle $lang two
SRT
  cat > "spu_$lang.xml" <<XML
<subpictures format="PAL"><stream><textsub filename="sub_$lang.srt" characterset="UTF-8" fontsize="28.0" font="DejaVuSans.ttf" horizontal-alignment="center" vertical-alignment="bottom" subtitle-fps="25" movie-fps="25" movie-width="720" movie-height="574"/></stream></subpictures>
XML
done
# spumux looks for the font in ~/.spumux.
export HOME="$work"
mkdir -p "$HOME/.spumux"
ln -sf "$font" "$HOME/.spumux/DejaVuSans.ttf"
spumux -s 0 spu_de.xml < av.mpg > av_s0.mpg 2>spumux0.log || { cat spumux0.log >&2; exit 1; }
spumux -s 1 spu_en.xml < av_s0.mpg > av_s1.mpg 2>spumux1.log || { cat spumux1.log >&2; exit 1; }
# content="…" attributes from the optional content codes (none: no attribute, as before).
content() { [ -n "${1:-}" ] && printf ' content="%s"' "$1"; return 0; }
read -r acontent_de acontent_en <<<"${DVD_AUDIO_CONTENT:-}"
read -r scontent_de scontent_en <<<"${DVD_SUBPICTURE_CONTENT:-}"
cat > dvd.xml <<XML
<dvdauthor dest="$work/DVD"><vmgm/><titleset>
 <titles>
  <audio lang="de"$(content "${acontent_de:-}")/><audio lang="en"$(content "${acontent_en:-}")/>
  <subpicture lang="de"$(content "${scontent_de:-}")/><subpicture lang="en"$(content "${scontent_en:-}")/>
  <pgc><vob file="av_s1.mpg" chapters="0,00:00:05"/></pgc>
 </titles>
</titleset></dvdauthor>
XML
VIDEO_FORMAT=PAL dvdauthor -x dvd.xml >/dev/null 2>dvdauthor.log || { cat dvdauthor.log >&2; exit 1; }
genisoimage -quiet -dvd-video -V "$label" -o "$out" "$work/DVD"
