#!/bin/sh
# The benchmark A-Tune runs: output lines are read back by the client's `get` commands.
cd "$(dirname "$0")/../dirty-writes" && python3 writes.py --mb 64
