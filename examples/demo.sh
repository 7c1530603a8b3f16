#!/bin/sh
# The demo: plan a checkpoint of the bundled example graph.
set -e
cd "$(dirname "$0")/.."
bin/ckpt-plan -p -g examples/graph.json
