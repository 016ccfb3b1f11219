#!/bin/sh
# Fake agent with one good and one malformed usage report.
echo 'GRUB_USAGE {"input":10,"cached":0,"output":5}' >&2
echo 'GRUB_USAGE {"inputs":10}' >&2
echo "done"
