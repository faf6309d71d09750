#!/bin/sh
# A guest test that fails: the test bed must report it and fail the run.
echo "ok 1 - this one passes"
echo "not ok 2 - this one fails on purpose"
exit 1
