#!/bin/sh
# Fake agent that never finishes: starts a child, records its pid in the
# harness dir (atomically), and waits.
sleep 300 &
echo $! > "$GRUB_HARNESS_DIR/child.pid.tmp"
mv "$GRUB_HARNESS_DIR/child.pid.tmp" "$GRUB_HARNESS_DIR/child.pid"
wait
