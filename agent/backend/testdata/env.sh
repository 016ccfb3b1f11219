#!/bin/sh
# Fake agent: prints what grub gave it, one NAME=value line each.
echo "TASK=$GRUB_TASK_ID"
echo "ITERATION=$GRUB_ITERATION"
echo "PHASE=$GRUB_PHASE"
echo "HARNESS=$GRUB_HARNESS_DIR"
echo "PROMPT_FILE=$GRUB_PROMPT_FILE"
echo "PROMPT_FILE_TEXT=$(cat "$GRUB_PROMPT_FILE")"
echo "EXTRA=$GRUB_TEST_EXTRA"
echo "PWD=$(pwd -P)"
