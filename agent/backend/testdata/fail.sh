#!/bin/sh
# Fake agent: says something, complains on stderr, exits 3.
echo "half an answer"
echo "first complaint" >&2
echo "model endpoint unreachable" >&2
exit 3
