# Applied to the roff pandoc writes (man/meson.build).
#
# Hyphenation and justification off, as in systemd's pages: paths, unit names and options must not
# be split or stretched ("off-line", "/usr/lib/sbx/pro-files.d"). pandoc turns hyphenation on.
s/^\.hy$/.nh\
.ad l/
# pandoc 2.x writes "-" in text as is, pandoc 3 as "\-". Man pages want "\-" for the dashes of
# options and commands (groff renders "-" as a hyphen, U+2010, on some systems, which breaks
# copying a command line). Text lines only: requests and comments start with "." or "'".
/^[.']/!{
        s/\\-/-/g
        s/-/\\-/g
}
