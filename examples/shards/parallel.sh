#!/bin/sh
# ckpt-inspect's shards of a savepoint run by GNU parallel over ssh hosts (ckpt-inspect(1), SHARDS):
# the plan made once, each shard read on a host where ckpt is installed, its rows into its own part
# file in S3 (or a shared directory), written whole; a failed shard is simply run again.
#   sh parallel.sh s3://bucket/savepoints/sp-1/ s3://bucket/rows/ 64 host1,host2,host3
# Locally, without ssh: HOSTS=: (parallel's name for this machine).
set -e
SNAP=$1 OUT=$2 N=${3:-16} HOSTS=${4:-:}
ckpt-inspect --shards "$N" "$SNAP" > plan.ndjson
parallel --sshlogin "$HOSTS" --retries 2 --halt now,fail=1 \
	ckpt-inspect -R --shard {} -o "$OUT" --compress zst "$SNAP" :::: plan.ndjson
