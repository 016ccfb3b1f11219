#!/bin/sh
# Fake agent reporting token usage on stderr, mixed with other output.
cat > /dev/null
echo 'thinking...' >&2
echo 'GRUB_USAGE {"input":1000,"cached":400,"output":50}' >&2
echo 'not GRUB_USAGE {"input":999999}' >&2
printf 'GRUB_USAGE {"input":200,"output":7}\r\n' >&2
echo 'GRUB_USAGE {"cached":1,"requests":3}' >&2
echo "done"
