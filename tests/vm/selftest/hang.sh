#!/bin/sh
# A guest that never finishes: the test bed must time out and fail the run.
echo "# hanging on purpose"
while :; do sleep 1; done
