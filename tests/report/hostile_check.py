# Checks a report directory (and text outputs) made from tests/report/hostile.c's trace: every
# JSON file is UTF-8 that json.load takes, holds no U+FFFE/U+FFFF; every SVG parses as XML;
# index.html is UTF-8 and its inline JSON parses; the text files hold no control character but
# newline and tab, and no invalid UTF-8; script's output has one "# end" line.
# usage: hostile_check.py REPORT_DIR REPORT_STDOUT SCRIPT_OUTPUT
import glob, json, os, re, sys
import xml.etree.ElementTree as ET

rep, stdout_file, script_file = sys.argv[1:]
bad = []


def text_of(path):
    data = open(path, "rb").read()
    try:
        t = data.decode("utf-8")  # strict: no surrogates, nothing overlong or beyond U+10FFFF
    except UnicodeDecodeError as e:
        bad.append("%s: not UTF-8: %s" % (path, e))
        return data.decode("utf-8", "replace")
    if "\ufffe" in t or "\uffff" in t:
        bad.append("%s: holds U+FFFE or U+FFFF" % path)
    return t


for f in ["summary.json", "timeline.json", "gaps.speedscope.json"]:
    path = os.path.join(rep, f)
    t = text_of(path)
    try:
        json.loads(t)  # strict: no raw control characters in strings
    except ValueError as e:
        bad.append("%s: json: %s" % (path, e))
svgs = sorted(glob.glob(os.path.join(rep, "gaps", "*.svg")))
if len(svgs) < 2:
    bad.append("only %d flame graphs" % len(svgs))
for path in svgs:
    text_of(path)
    try:
        ET.parse(path)
    except ET.ParseError as e:
        bad.append("%s: XML: %s" % (path, e))
html = text_of(os.path.join(rep, "index.html"))
for m in re.finditer(r'<script type="application/json"[^>]*>(.*?)</script>', html, re.S):
    try:
        json.loads(m.group(1))
    except ValueError as e:
        bad.append("index.html: inline JSON: %s" % e)
inline = re.findall(r'<script type="image/svg\+xml"[^>]*>(.*?)</script>', html, re.S)
for svg in inline:
    try:
        ET.fromstring(svg)
    except ET.ParseError as e:
        bad.append("index.html: inline SVG: %s" % e)
print("%d JSON files, %d SVG files, %d SVGs inline in index.html" % (3, len(svgs), len(inline)))
for path in [os.path.join(rep, "summary.txt"), stdout_file, script_file]:
    t = text_of(path)
    ctl = sorted({"%02x" % ord(c) for c in t if (ord(c) < 0x20 and c not in "\n\t") or
                  0x7f <= ord(c) <= 0x9f})
    if ctl:
        bad.append("%s: control characters %s" % (path, " ".join(ctl)))
st = open(script_file, "rb").read().decode("utf-8", "replace")
ends = re.findall(r"^# end .*$", st, re.M)
if len(ends) != 1 or not re.match(r"^# end events=[1-9]", ends[0]):
    bad.append("script: '# end' lines: %r" % ends)
if re.search(r"^# losses total=0$", st, re.M):
    bad.append("script: a kernel name forged a '# losses' line")
for b in bad:
    print("FAIL: " + b)
print("%d problems in %s" % (len(bad), rep))
sys.exit(1 if bad else 0)
