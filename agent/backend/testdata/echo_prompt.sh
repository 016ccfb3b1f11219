#!/bin/sh
# Fake agent: answers with the prompt it read on stdin.
cat
